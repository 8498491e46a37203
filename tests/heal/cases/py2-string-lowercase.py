import string
print(string.lowercase[-3:])
