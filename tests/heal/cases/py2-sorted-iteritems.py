d = {'b': 2, 'a': 1}
print(sorted(d.iteritems()))
