try:
    x = int('1')
except ValueError:
    raise
print('ok')
