for i in xrange(1):
    print('xrange <> `x` 0777')
