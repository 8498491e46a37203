import re

LOG = """2024-05-01 12:00:01 INFO  server started port=8080
2024-05-01 12:00:05 WARN  slow request path=/api/items ms=1200
2024-05-01 12:00:09 ERROR db timeout path=/api/orders ms=5000
"""
pattern = re.compile(r"^(?P<date>\S+) (?P<time>\S+) (?P<level>\w+)\s+(?P<msg>.*)$", re.MULTILINE)
kv = re.compile(r"(\w+)=(\S+)")
for m in pattern.finditer(LOG):
    fields = dict(kv.findall(m.group("msg")))
    print(m.group("level"), fields)
print(re.sub(r"\d", "#", "call 555-1234"))
