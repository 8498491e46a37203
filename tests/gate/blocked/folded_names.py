# expect: dangerous-call 7
# expect: dangerous-call 8
# expect: dangerous-call 9
import os
import sys

os.__dict__["sys" + "tem"]("ls")  # VIOLATION: dangerous-call
sys.modules["o" + "s"].popen("id")  # VIOLATION: dangerous-call
getattr(__builtins__, f"{'ev'}al")("1")  # VIOLATION: dangerous-call
print(getattr(os, "se" + "p"))
