items = [3, 1, 2]
items.sort()
items.apend(4)
print(items)
