msg = 'hello'
shout = msg.toUpperCase()
size = msg.length
print(shout, size, msg.startsWith('he'))
