d = {'a': 1}
print(d.containsKey('a'))
