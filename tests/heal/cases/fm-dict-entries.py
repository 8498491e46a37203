d = {'a': 1}
print(list(d.entries()))
