items = [1, 2]
print([i * 2 for i in itmes])
