import math
print(str(math.sqr(4)))
