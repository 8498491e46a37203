import urlparse
print urlparse.urlparse('http://a/b').path
