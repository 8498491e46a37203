d = {'a': 1}
if d.has_key('a'):
    print('yes')
