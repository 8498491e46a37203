print('ABC'.toLowerCase())
