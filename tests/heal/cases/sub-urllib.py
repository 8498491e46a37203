import urllib
print(urllib.parse.quote('a b'))
