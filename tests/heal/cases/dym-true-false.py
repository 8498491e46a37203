ok = true
bad = false
print(ok, bad)
