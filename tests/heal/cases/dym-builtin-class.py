print(isinstance('a', strr))
