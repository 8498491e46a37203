values = [1, 2]
print(math.sqrt(16), len(valeus) + 1)
