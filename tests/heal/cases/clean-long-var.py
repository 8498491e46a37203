long = 3
print(long)
