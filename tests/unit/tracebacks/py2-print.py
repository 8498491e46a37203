name = "world"
print "hello", name
