def check(xs):
    errors = []
    for x in xs:
        if x < 0:
            errors.append(ValueError(f"negative: {x}"))
        elif x == 0:
            errors.append(ZeroDivisionError("zero"))
    if errors:
        raise ExceptionGroup("bad input", errors)


check([1, -2, 0])
