from decimal import ROUND_HALF_UP, Decimal, getcontext
from fractions import Fraction

getcontext().prec = 10
print(Decimal(1) / Decimal(7), Decimal("2.675").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
f = Fraction(3, 4) + Fraction(1, 6)
print(f, float(f), f.limit_denominator(10), round(2.5), round(3.5), divmod(-7, 2), 7 // -2)
print(int("ff", 16), bin(10), 0.1 + 0.2 == 0.3, abs(-3 + 4j))
