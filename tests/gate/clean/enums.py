import enum


class Color(enum.Enum):
    RED = enum.auto()
    GREEN = enum.auto()
    BLUE = enum.auto()


class Perm(enum.IntFlag):
    R = 4
    W = 2
    X = 1


mode = Perm.R | Perm.W
print([c.name for c in Color], Color["GREEN"].value, Color(3))
print(mode, Perm.X in mode, int(mode))
