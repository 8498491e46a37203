import json


def load(text):
    return json.loads(text)


print(load('{"a": 1,}'))
