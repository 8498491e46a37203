def f(items):
    total = 0
    for i in items:
        total += i
    return totl

print(f([1, 2]))
