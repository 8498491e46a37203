import string
print(string.join(['a', 'b'], '-'))
