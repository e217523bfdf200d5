"""why_not_in: where and why a value is not in a space, for messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai.spaces import (
    Box,
    Dict,
    Discrete,
    MaskedBox,
    MultiBinary,
    MultiDiscrete,
    Sequence,
    Space,
    Tuple,
)
from sekai.spaces._explain import short_repr, why_not_in

PIXELS = Box(0.0, 1.0, shape=(84, 84, 3))
ONE_BAD_PIXEL = np.full((84, 84, 3), 0.5, np.float32)
ONE_BAD_PIXEL[10, 3, 2] = 1.5


class Positive(Space[Any]):
    """A space of another library: no reasons registered for it."""

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> Any:
        return 1.0

    def contains(self, x: Any) -> bool:
        return isinstance(x, float) and x > 0

    def __repr__(self) -> str:
        return "Positive()"


@pytest.mark.parametrize(
    ("space", "x", "reason"),
    [
        (
            PIXELS,
            np.full((84, 84), 0.5, np.float32),
            ("", "has shape (84, 84), expected (84, 84, 3)"),
        ),
        (PIXELS, ONE_BAD_PIXEL, ("[10, 3, 2]", "is 1.5, outside [0.0, 1.0]")),
        (Box(0.0, 1.0, shape=(2,)), [0.5, np.nan], ("[1]", "is NaN")),
        (Box(0.0, 1.0, shape=()), 2.0, ("", "is 2.0, outside [0.0, 1.0]")),
        (Box(0.1, 1.0, shape=(2,)), [0.1, 0.05], ("[1]", "is 0.05, outside [0.1, 1.0]")),
        (
            Box(0, 255, shape=(2,), dtype=np.uint8),
            np.array([1, 2]),
            ("", "has dtype int64, which does not cast to uint8 (same kind)"),
        ),
        (Box(0, 255, shape=(2,), dtype=np.uint8), [1, 256], ("[1]", "is 256, outside [0, 255]")),
        (
            Box(0.0, 1.0, shape=(2,)),
            "ab",
            ("", "is 'ab' (a str), expected an array of shape (2,)"),
        ),
        (
            Box(0.0, 1.0, shape=(2,)),
            np.array([0.5, 0.2], dtype=object),
            ("", "has dtype object, expected a dtype that casts to float32 (same kind)"),
        ),
        (
            Box(0.0, 1.0, shape=(2,)),
            np.array([0.5, 0.2], dtype=complex),
            ("", "has dtype complex128, expected a dtype that casts to float32 (same kind)"),
        ),
        (
            Box(0.0, 1.0, shape=(2,)),
            [0.5, 2**80],
            ("", "has dtype object, expected a dtype that casts to float32 (same kind)"),
        ),
        (
            Box(0, 255, shape=(), dtype=np.uint8),
            np.int64(5),
            ("", "has dtype int64, which does not cast to uint8 (same kind)"),
        ),
        (
            MultiDiscrete([2, 3]),
            np.array([1, 2], dtype=object),
            ("", "has dtype object, expected integers"),
        ),
        (Discrete(3), 3, ("", "is 3, outside [0, 2]")),
        (Discrete(3, start=-1), -2, ("", "is -2, outside [-1, 1]")),
        (Discrete(3), 2.0, ("", "is 2.0 (a float), expected an int")),
        (Discrete(3), True, ("", "is True (a bool), expected an int")),
        (
            Discrete(3),
            np.array([1]),
            ("", "is an array of shape (1,) and dtype int64, expected an int"),
        ),
        (MultiDiscrete([2, 3]), [1, 3], ("[1]", "is 3, outside [0, 2]")),
        (MultiDiscrete([2, 3]), [1.0, 2.0], ("", "has dtype float64, expected integers")),
        (MultiDiscrete([2, 3]), [1], ("", "has shape (1,), expected (2,)")),
        (MultiBinary(3), [0, 1, 2], ("[2]", "is 2, expected 0 or 1")),
        (Dict(a=Discrete(2)), [0], ("", "is a list, expected a dict with keys ['a']")),
        (Dict(a=Discrete(2), b=Discrete(2)), {"a": 0}, ("", "has no key 'b'")),
        (
            Dict(a=Discrete(2)),
            {"a": 0, "c": 1},
            ("", "has a key 'c' that the space does not have"),
        ),
        (
            Dict(outer=Dict(regime=Discrete(3)), x=Box(0.0, 1.0, shape=(1,))),
            {"outer": {"regime": 3}, "x": np.zeros(1, np.float32)},
            ("['outer']['regime']", "is 3, outside [0, 2]"),
        ),
        (Tuple([Discrete(2), Discrete(2)]), (0,), ("", "has 1 items, expected 2")),
        (Tuple([Discrete(2), Discrete(2)]), (0, 5), ("[1]", "is 5, outside [0, 1]")),
        (Tuple([Discrete(2)]), 0, ("", "is 0 (an int), expected a tuple of 1 items")),
        (
            Sequence(Discrete(2), max_length=2),
            (0, 1, 1),
            ("", "has 3 items, more than max_length 2"),
        ),
        (Sequence(Discrete(2)), (0, 4), ("[1]", "is 4, outside [0, 1]")),
        (
            Sequence(Discrete(2)),
            np.array([0]),
            ("", "is an array of shape (1,) and dtype int64, expected a tuple of elements"),
        ),
        (Sequence(Discrete(2), stack=True), np.array([0, 7]), ("[1]", "is 7, outside [0, 1]")),
        (
            Sequence(Dict(a=Discrete(2), b=Discrete(2)), stack=True),
            {"a": np.array([0, 1]), "b": np.array([1, 9])},
            ("['b']", "is 9, outside [0, 1] (in element 1 of the sequence)"),
        ),
        # a stack of the wrong dtype: explained by its first element, where it has one
        (
            Sequence(Discrete(3), stack=True),
            np.array([0.0, 1.0]),
            ("[0]", "is np.float64(0.0) (a numpy.float64), expected an int"),
        ),
        (
            Sequence(Dict(a=Discrete(3)), stack=True),
            {"a": np.array([0.0, 1.0])},
            (
                "['a']",
                "is np.float64(0.0) (a numpy.float64), expected an int (in element 0 of the "
                "sequence)",
            ),
        ),
        (
            Sequence(Tuple([Discrete(3), Box(0.0, 1.0, (2,))]), stack=True),
            (np.array([0, 1]), np.zeros((2, 2), np.complex128)),
            (
                "[1]",
                "has dtype complex128, expected a dtype that casts to float32 (same kind) (in "
                "element 0 of the sequence)",
            ),
        ),
        (
            Sequence(Discrete(3), stack=True),
            np.zeros(0, "<U1"),
            ("", "has dtype <U1, which holds no elements of Discrete(3)"),
        ),
        (
            Sequence(Tuple([Discrete(3), Dict(b=Box(0, 255, (2,), np.uint8))]), stack=True),
            (np.zeros(0, np.int64), {"b": np.zeros((0, 2), np.int64)}),
            ("[1]['b']", "has dtype int64, which holds no elements of Box(0, 255, (2,), uint8)"),
        ),
        (
            MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
            {"values": np.array([[0.5, 2.0], [0.0, 0.0]]), "mask": np.array([1, 0], np.int8)},
            ("['values'][0, 1]", "is 2.0, outside [0.0, 1.0] (an occupied slot)"),
        ),
        (
            MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
            {"values": np.full((2, 2), 0.5), "mask": np.array([1, 0], np.int8)},
            (
                "['values'][1]",
                "is array([0.5, 0.5]) in an empty slot (mask 0), expected the fill value "
                "array([0., 0.], dtype=float32)",
            ),
        ),
        (
            MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
            {"values": np.zeros((2, 2)), "mask": np.array([1, 3], np.int8)},
            ("['mask'][1]", "is 3, expected 0 or 1"),
        ),
        (
            MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
            {"values": np.zeros((3, 2)), "mask": np.array([1, 0], np.int8)},
            ("['values']", "has shape (3, 2), expected (2, 2)"),
        ),
        (MaskedBox(0.0, 1.0, shape=(2,), max_size=2), {"values": 0}, ("", "has no key 'mask'")),
        (Positive(), -1.0, ("", "is not in Positive()")),
        (Dict(p=Positive()), {"p": -1.0}, ("['p']", "is not in Positive()")),
    ],
)
def test_why_not_in_names_the_first_failing_part(space: Space[Any], x: Any, reason: Any) -> None:
    assert not space.contains(x)
    assert why_not_in(space, x) == reason


@pytest.mark.parametrize(
    ("space", "x"),
    [
        (Box(0.1, 1.0, shape=(2,)), [0.1, 0.5]),
        (Discrete(3), np.int64(2)),
        (Dict(a=Discrete(3)), {"a": 1}),
        (Sequence(Discrete(3), stack=True), np.array([0, 2])),
        (
            MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
            MaskedBox(0.0, 1.0, (2,), max_size=2).empty(),
        ),
        (Positive(), 1.0),
    ],
)
def test_why_not_in_finds_nothing_for_members(space: Space[Any], x: Any) -> None:
    assert space.contains(x)
    assert why_not_in(space, x) is None


def test_short_repr_abridges_arrays_and_cuts_long_text() -> None:
    assert short_repr(np.zeros(3)) == "array([0., 0., 0.])"
    text = short_repr(np.zeros((84, 84, 3)))
    assert len(text) <= 200 and text.endswith("...")
    assert short_repr("x" * 300, limit=10) == "'xxxxxx..."
