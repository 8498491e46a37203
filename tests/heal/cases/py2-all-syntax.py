try:
    x = int('z')
except ValueError, e:
    print 'bad'
print 0777, 1 <> 2, `3`
