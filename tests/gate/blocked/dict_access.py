# expect: dangerous-call 5
# expect: dangerous-call 6
import os

os.__dict__["system"]("ls")  # VIOLATION: dangerous-call
vars(os)["popen"]("id")  # VIOLATION: dangerous-call
