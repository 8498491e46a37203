import sys
if sys.version_info[0] < 3:
    rng = xrange
else:
    rng = range
print(list(rng(2)))
