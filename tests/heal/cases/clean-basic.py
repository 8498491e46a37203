print(sorted([3, 1, 2]))
