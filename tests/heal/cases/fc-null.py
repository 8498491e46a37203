value = null
print(value)
