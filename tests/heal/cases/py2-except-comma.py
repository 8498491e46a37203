try:
    int('z')
except ValueError, e:
    print('bad')
