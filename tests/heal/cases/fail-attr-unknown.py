class A:
    pass

print(A().nothing_like_it)
