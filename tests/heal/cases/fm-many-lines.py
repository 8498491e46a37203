names = []
names.push('a')
names.push('b')
print(names.length, names.includes('a'))
