class Shape:
    registry = {}
    sides = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Shape.registry[cls.__name__.lower()] = cls

    def __init__(self, size):
        self.size = size

    @classmethod
    def create(cls, kind, size):
        return cls.registry[kind](size)

    @staticmethod
    def describe(n):
        return f"{n} sides"

    @property
    def perimeter(self):
        return self.sides * self.size

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


class Triangle(Shape):
    sides = 3


class Square(Shape):
    sides = 4

    @property
    def area(self):
        return self.size ** 2


for kind in ("triangle", "square"):
    s = Shape.create(kind, 2)
    print(s, s.perimeter, Shape.describe(s.sides))
print(Square(3).area, sorted(Shape.registry))
