# expect: dangerous-call 8
import sys

if len(sys.argv) > 5:
    def eval(s):
        return s

print(eval("6 * 7"))  # VIOLATION: dangerous-call
