total = 3
print(totl + 1)
