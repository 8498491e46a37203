print('a', 'b')
