print(long('5'))
