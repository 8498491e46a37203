xs = []
xs.push(1)
xs = [2]
print(xs)
