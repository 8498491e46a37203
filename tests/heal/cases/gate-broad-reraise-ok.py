try:
    x = 1
except Exception:
    raise
print('done')
