n = 42
print('n=' + n.toString())
