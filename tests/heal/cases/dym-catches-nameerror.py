try:
    x = unicod
except NameError:
    x = 1
unicode_ = 2
print(x)
