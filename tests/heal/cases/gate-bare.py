try:
    pass
except:
    pass
