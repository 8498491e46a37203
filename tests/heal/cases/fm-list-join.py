words = ['a', 'b']
print(words.join(','))
