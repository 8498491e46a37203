s = 'abc'
print(s.toUpperCase(), s.startsWith('a'), s.includes('b'))
