d = {'a': 1}
for k, v in d.iteritems():
    print(k, v)
if d.has_key('a'):
    print('yes')
