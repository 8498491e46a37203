>>> total = 6
>>> print(totl)
6
