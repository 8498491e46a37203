try:
    x = 1 / 0
except Exception as e:
    print('log', e)
    raise
