ab = 1
print(ac)
