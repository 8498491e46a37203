# expect: broad-except 6
import json

try:
    data = json.loads("{oops")
except (ValueError, Exception):  # VIOLATION: broad-except
    data = None
try:
    x = int("x")
except (KeyError, ValueError):
    x = 0
print(data, x)
