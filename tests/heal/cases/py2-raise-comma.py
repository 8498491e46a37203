def f(x):
    if x < 0:
        raise ValueError, 'negative'
    return x

try:
    f(-1)
except ValueError, e:
    print 'caught', e
