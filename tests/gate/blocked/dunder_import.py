# expect: dangerous-call 4
# expect: dangerous-call 6
# expect: dangerous-call 6
mod = __import__("json")  # VIOLATION: dangerous-call
print(mod.dumps([1]))
__import__("os").system("ls")  # VIOLATION: dangerous-call dangerous-call
