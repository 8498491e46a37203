x = [1]
x.push(2)
print(x)
