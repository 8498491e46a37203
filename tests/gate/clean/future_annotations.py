from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Literal, TypedDict, overload

if TYPE_CHECKING:
    from collections.abc import Sequence


class Movie(TypedDict):
    title: str
    year: int


Mode = Literal["r", "w"]


@overload
def first(xs: Sequence[int]) -> int: ...
@overload
def first(xs: Sequence[str]) -> str: ...
def first(xs):
    return xs[0]


def use(fn: Callable[[Movie], str], m: Movie, mode: Mode = "r") -> str:
    return fn(m) + mode


print(first([3, 2]), first("zy"), use(lambda m: m["title"], {"title": "Up", "year": 2009}))
