print(int('abc'))
