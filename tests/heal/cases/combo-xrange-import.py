for i in xrange(2):
    print(i, math.sqrt(1))
