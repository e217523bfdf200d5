"""Fixtures shared by the space tests: user-defined spaces the space utilities do not know."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sekai.spaces import Space

MakeSpaceType = Callable[..., type[Space[Any]]]


def _make_space_type(
    name: str, members: tuple[Any, ...], *, flattenable: bool = False
) -> type[Space[Any]]:
    """A new Space subclass called ``name`` whose members are ``members``; samples pick one."""

    class UserSpace(Space[Any]):
        @property
        def is_flattenable(self) -> bool:
            return flattenable

        def sample(self, mask: Any = None) -> Any:
            return members[int(self.rng.integers(len(members)))]

        def contains(self, x: Any) -> bool:
            return x in members

    UserSpace.__name__ = UserSpace.__qualname__ = name
    return UserSpace


@pytest.fixture
def make_space_type() -> MakeSpaceType:
    """Build a user-defined space class; a fresh one per test, so registrations do not leak."""
    return _make_space_type
