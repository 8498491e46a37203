import xml
r = xml.etree.ElementTree.fromstring('<a>1</a>')
print(r.text)
