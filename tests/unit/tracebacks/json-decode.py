import json

payload = ""
data = json.loads(payload)
print(data)
