"""Slotted: instances of ``__slots__`` classes pickle and copy with every protocol."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from sekai._slots import Slotted


class Base(Slotted):
    __slots__ = ("__hidden", "shared")

    def __init__(self) -> None:
        self.__hidden = [1, 2]
        self.shared = "base"

    def hidden(self) -> Any:
        return self.__hidden


class Point(Base):
    __slots__ = ("unset", "x")

    def __init__(self, x: Any) -> None:
        super().__init__()
        self.x = x


class Loose(Point):
    """A subclass without ``__slots__``: its instances have a ``__dict__`` too."""

    def __init__(self, x: Any) -> None:
        super().__init__(x)
        self.extra = {"k": 1}


def _same(a: Point, b: Point) -> None:
    assert type(b) is type(a)
    assert getattr(b, "__dict__", None) == getattr(a, "__dict__", None)
    assert (b.x, b.shared, b.hidden()) == (a.x, a.shared, a.hidden())
    assert not hasattr(b, "unset")
    assert b.hidden() is not a.hidden()


@pytest.mark.parametrize("cls", [Point, Loose])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_set_slot_of_the_class_and_its_bases_survives_every_protocol(
    cls: type[Point], protocol: int
) -> None:
    point = cls({"a": 1.5})
    _same(point, pickle.loads(pickle.dumps(point, protocol=protocol)))


@pytest.mark.parametrize("cls", [Point, Loose])
def test_deepcopy_copies_every_set_slot_and_copy_shares_the_values(cls: type[Point]) -> None:
    point = cls([3])
    _same(point, copy.deepcopy(point))
    shallow = copy.copy(point)
    assert shallow.x is point.x and shallow.hidden() is point.hidden()
