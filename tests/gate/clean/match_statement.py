# requires: 3.10
from dataclasses import dataclass


@dataclass
class Circle:
    r: float


@dataclass
class Rect:
    w: float
    h: float


def describe(shape):
    match shape:
        case Circle(r=0):
            return "a dot"
        case Circle(r=r) if r > 10:
            return f"a big circle {r}"
        case Circle(r):
            return f"a circle {r}"
        case Rect(w=w, h=h) if w == h:
            return f"a square {w}"
        case Rect(w, h):
            return f"a rect {w}x{h}"
        case {"kind": "poly", "sides": [first, *rest]}:
            return f"a polygon starting with {first} and {len(rest)} more"
        case {"kind": kind, **others}:
            return f"some {kind} with {sorted(others)}"
        case [x, y] | (x, y, _):
            return f"a point {x},{y}"
        case str() as text:
            return f"text {text!r}"
        case _:
            return "unknown"


for s in [Circle(0), Circle(12), Circle(2), Rect(3, 3), Rect(2, 5), {"kind": "poly", "sides": [1, 2, 3]},
          {"kind": "blob", "a": 1}, [1, 2], "hi", 3.5]:
    print(describe(s))
