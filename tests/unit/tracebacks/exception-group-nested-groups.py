def inner():
    raise ExceptionGroup("inner", [KeyError("k"), ValueError("v")])


def outer():
    try:
        inner()
    except ExceptionGroup as g:
        raise ExceptionGroup("outer", [g, TypeError("t")])


outer()
