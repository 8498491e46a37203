# expect: broad-except 8
import json

RECOVERABLE = (KeyError, json.JSONDecodeError, Exception)

try:
    json.loads("{")
except RECOVERABLE as e:  # VIOLATION: broad-except
    print("recovered", e)
