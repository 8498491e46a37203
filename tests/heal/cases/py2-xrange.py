for i in xrange(3):
    print(i)
