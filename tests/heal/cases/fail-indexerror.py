x = [1]
print(x[3])
