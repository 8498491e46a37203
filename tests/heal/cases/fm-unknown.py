x = [1]
x.frobnicate()
