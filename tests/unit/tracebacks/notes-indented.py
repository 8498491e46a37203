def load(path):
    err = ValueError("bad header in " + path + ":\n  expected: id,name\n  found: id;name")
    err.add_note("hint: the file uses ';' as separator")
    raise err


load("data.csv")
