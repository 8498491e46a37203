import xml.etree.ElementTree as ET
print(ET.fromstring('<a>1</a>').text)
