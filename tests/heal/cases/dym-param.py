def area(width, height):
    return widht * height

print(area(2, 3))
