import json
print(jsno.loads('[1]'))
