import urllib2
print(urllib2.urlopen)
