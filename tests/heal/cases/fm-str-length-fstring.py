s = 'abc'
n = s.length
print(n)
