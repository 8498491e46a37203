def f():
    result = 1
    return result

print(reslt)
