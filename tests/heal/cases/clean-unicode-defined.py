try:
    unicode
except NameError:
    unicode = str
print(unicode('x'))
