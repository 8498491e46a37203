xs = []
if xs.isEmpty():
    print('empty')
