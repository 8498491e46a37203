from math import *

print(sqrt(16), floor(pi * 100) / 100, hypot(3, 4))
print(gcd(12, 18), isclose(tau / 2, pi))
