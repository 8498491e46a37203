xs = [1, 2]
print(xs.map(lambda x: x * 2), xs.filter(lambda x: x < 2))
