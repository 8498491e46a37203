print(lenn([1, 2, 3]))
