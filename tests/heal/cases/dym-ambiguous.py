cat = 1
car = 2
print(caz)
