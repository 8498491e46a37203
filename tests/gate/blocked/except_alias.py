# expect: broad-except 6
Oops = Exception

try:
    1 / 0
except Oops:  # VIOLATION: broad-except
    print("caught")
