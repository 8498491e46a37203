x = raw_input()
print(x)
