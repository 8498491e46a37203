print('hi'.upcase())
