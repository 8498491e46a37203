print(isinstance('x', basestring))
