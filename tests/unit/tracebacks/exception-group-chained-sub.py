def convert(s):
    try:
        return int(s)
    except ValueError as e:
        raise TypeError(f"not a number: {s}") from e


errs = []
for s in ("x", "y"):
    try:
        convert(s)
    except TypeError as e:
        errs.append(e)
raise ExceptionGroup("conversion", errs)
