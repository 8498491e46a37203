import sys
print(sys.maxint > 0)
