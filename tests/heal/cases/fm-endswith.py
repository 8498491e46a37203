name = 'a.py'
print(name.endsWith('.py'))
