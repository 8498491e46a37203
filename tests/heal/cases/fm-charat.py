s = 'abc'
print(s.charAt(1))
