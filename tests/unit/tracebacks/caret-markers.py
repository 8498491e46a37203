data = {"a": {"b": None}}
factor = 2
value = data["a"]["b"]["c"] * factor
print(value)
