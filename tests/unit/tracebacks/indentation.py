def f(x):
    if x > 1:
        return x
      return 0


print(f(3))
