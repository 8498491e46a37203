import math
import statistics

samples = [2.5, 3.1, 4.7, 3.3, 2.9, 5.0, 3.8]
print(f"mean={statistics.mean(samples):.3f} median={statistics.median(samples)}")
print(f"stdev={statistics.stdev(samples):.3f} fsum={math.fsum(samples)}")
q = statistics.quantiles(samples, n=4)
print([round(x, 2) for x in q])
