numbers = [1, 2, 3, 4]
print(sum(nubmers))
print(sum(nubmers))
