def eval(expr):
    """A tiny calculator for 'a op b' strings: no Python eval involved."""
    a, op, b = expr.split()
    ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}
    return ops[op](float(a), float(b))


def exec(*steps):
    return [eval(s) for s in steps]


print(eval("2 * 21"))
print(exec("1 + 1", "6 - 2"))
