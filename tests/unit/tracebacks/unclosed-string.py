x = 1
msg = "unterminated
print(msg)
