print(map(str, [1, 2])[0])
