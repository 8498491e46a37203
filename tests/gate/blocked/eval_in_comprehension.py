# expect: dangerous-call 4
# expect: dangerous-call 5
exprs = ["1+1", "2*3"]
values = [eval(e) for e in exprs]  # VIOLATION: dangerous-call
print({e: exec(e) for e in exprs})  # VIOLATION: dangerous-call
