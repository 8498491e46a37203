def f():
    '''
    >>> f()
    'ok'
    '''
    return 'ok'

print(f())
