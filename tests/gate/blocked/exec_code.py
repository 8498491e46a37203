# expect: dangerous-call 6
code = """
for i in range(3):
    print(i)
"""
exec(code)  # VIOLATION: dangerous-call
