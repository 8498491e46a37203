s = '  a  '
print('[' + s.trim() + ']')
