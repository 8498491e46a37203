import string
print(string.upper('ab'), string.replace('aXb', 'X', '-'), string.split('a b'))
