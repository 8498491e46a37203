# expect: broad-except 8
import json

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except:  # VIOLATION: broad-except
        return {}

print(load("/nonexistent.json"))
