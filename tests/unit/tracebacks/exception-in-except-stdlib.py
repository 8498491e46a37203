import json


def read_config(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return int(text)


print(read_config("not json"))
