values = [9]
for v in valeus:
    print math.sqrt(v)
