s = 'a'
if s.equals('a') and not s.isEmpty():
    print('yes')
