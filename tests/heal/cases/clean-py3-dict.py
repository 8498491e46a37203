d = {'a': 1}
for k, v in d.items():
    print(k, v)
