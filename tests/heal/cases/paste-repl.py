>>> x = 2
>>> x * 3
6
>>> print(x)
2
