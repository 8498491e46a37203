def add(a, b):
    return a - b

assert add(2, 2) == 4
