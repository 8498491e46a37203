d = {'a': 1}
print(d.keys()[0])
