print(sums)
