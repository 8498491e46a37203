def to_number(s):
    return int(s)


rows = ["1", "2", "x"]
print([to_number(r) for r in rows])
