try:
    input = raw_input
except NameError:
    pass
print('ok')
