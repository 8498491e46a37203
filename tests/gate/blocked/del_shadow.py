# expect: dangerous-call 7
def exec(s):
    return s


del exec
exec("print('hi')")  # VIOLATION: dangerous-call
