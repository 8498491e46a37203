s = set()
s.push(1)
print(s)
