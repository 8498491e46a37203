import sys
print >>sys.stderr, 'oops'
