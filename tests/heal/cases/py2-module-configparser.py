import ConfigParser
c = ConfigParser.ConfigParser()
print(type(c).__name__)
