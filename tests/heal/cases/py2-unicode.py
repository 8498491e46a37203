print(isinstance('x', unicode))
