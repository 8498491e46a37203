# expect: dangerous-call 3
def compute():
    return eval("2 + 2")  # VIOLATION: dangerous-call


print(compute())


def eval(s):
    return s
