import xml
d = xml.dom.minidom.parseString('<a/>')
print(d.documentElement.tagName)
