# expect: dangerous-call 3
expr = "2 + 3 * 4"
result = eval(expr)  # VIOLATION: dangerous-call
print(result)
