class Seq:
    length = 2

print(Seq().length)
