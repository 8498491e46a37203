# expect: broad-except 8
# expect: broad-except 12
import builtins
import builtins as b

try:
    int("x")
except builtins.Exception:  # VIOLATION: broad-except
    pass
try:
    int("y")
except (TypeError, b.BaseException) as err:  # VIOLATION: broad-except
    print(err)
