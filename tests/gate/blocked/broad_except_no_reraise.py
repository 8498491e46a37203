# expect: broad-except 8
# expect: broad-except 14
# A bare raise that is not the handler's last statement still lets the
# handler swallow the error on the other path.
def f(x):
    try:
        return int(x)
    except Exception as e:
        if x:
            raise
        return None
    try:
        return 1
    except Exception:
        raise RuntimeError("wrapped")
