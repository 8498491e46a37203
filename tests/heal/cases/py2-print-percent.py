d = {'a': 1}
for k, v in d.iteritems():
    print '%s=%d' % (k, v)
