import json

raw = '{"name": "csrun", "tags": ["jail", "python"], "stars": 42}'
broken = '{"name": "csrun", "tags": [}'


def load(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        print(f"bad JSON at line {e.lineno} col {e.colno}: {e.msg}")
        return None


doc = load(raw)
doc["stars"] += 1
print(json.dumps(doc, sort_keys=True, indent=2))
assert load(broken) is None
