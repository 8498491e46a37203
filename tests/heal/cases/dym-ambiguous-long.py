value1 = 1
value2 = 2
print(value3)
