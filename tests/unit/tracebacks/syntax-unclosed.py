import math

print("root:", math.sqrt(16)
x = 3
print(x)
