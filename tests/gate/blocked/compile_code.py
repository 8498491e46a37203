# expect: dangerous-call 3
src = "print('hi')"
obj = compile(src, "<snippet>", "exec")  # VIOLATION: dangerous-call
print(type(obj))
