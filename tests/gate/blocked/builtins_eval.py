# expect: dangerous-call 9
# expect: dangerous-call 10
# expect: dangerous-call 11
# expect: dangerous-call 12
# expect: dangerous-call 14
import builtins
import builtins as b

builtins.eval("1 + 1")  # VIOLATION: dangerous-call
b.exec("x = 1")  # VIOLATION: dangerous-call
__builtins__.eval("2")  # VIOLATION: dangerous-call
getattr(__builtins__, "compile")("1", "f", "eval")  # VIOLATION: dangerous-call
from builtins import exec as run_code
run_code("y = 2")  # VIOLATION: dangerous-call
