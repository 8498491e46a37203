values = [1, 4, 9]
total = 0
for v in values:
    total += math.sqrt(v)
print(total)
