from typing import Callable, Dict, Generic, Iterable, List, NamedTuple, Optional, TypeVar, Union

T = TypeVar("T")
Number = Union[int, float]


class Point(NamedTuple):
    x: float
    y: float


class Stack(Generic[T]):
    def __init__(self) -> None:
        self._items: List[T] = []

    def push(self, item: T) -> None:
        self._items.append(item)

    def pop(self) -> Optional[T]:
        return self._items.pop() if self._items else None


def apply(fn: Callable[[Number], Number], values: Iterable[Number]) -> Dict[Number, Number]:
    return {v: fn(v) for v in values}


s: Stack[Point] = Stack()
s.push(Point(1.0, 2.0))
print(s.pop(), s.pop())
print(apply(lambda v: v ** 2, [1, 2.5, 3]))
