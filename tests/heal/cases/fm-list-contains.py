xs = [1, 2]
print(xs.includes(2))
