x = 10L
print(x + 0777L, 0xffL)
