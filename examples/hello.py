# A first snippet for csrun: print a greeting and compute something with the
# standard library.
#
#   ./csrun run examples/hello.py
import platform
import statistics

samples = [2.5, 3.0, 4.5, 6.0, 9.5]
print(f"Hello from Python {platform.python_version()} inside csrun!")
print(f"mean of {samples} = {statistics.mean(samples)}")
