d = {'a': 1}
print(list(d.keys())[0])
