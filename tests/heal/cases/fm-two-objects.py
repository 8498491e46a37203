a = [1]
b = [2]
a.push(b.push(3))
