xs = [1, 2, 3]
print(xs.len())
