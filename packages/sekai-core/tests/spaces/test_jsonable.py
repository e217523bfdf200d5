"""JSON descriptions: to_jsonable/from_jsonable, space_from_jsonable, register_space_type."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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
    register_space_type,
    space_from_jsonable,
)

SPACES = [
    Box(-np.inf, np.inf, shape=(2,)),
    Box(0, 255, shape=(2, 2), dtype=np.uint8),
    Box(-np.inf, np.inf, shape=(2,), dtype=np.int64),
    Box([], [], (0,)),
    Discrete(3, start=-1),
    MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [0, 0]], dtype=np.int32),
    MultiBinary((2, 3)),
    Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3)),
    Tuple([Discrete(2), Tuple([MultiBinary(1)])]),
    Sequence(Box(0.0, 1.0, shape=(2,)), max_length=3, stack=True),
    Sequence(Sequence(Discrete(2))),
    MaskedBox(0.5, 1.0, shape=(2,), max_size=3, dtype=np.float64),
    MaskedBox(0, 5, shape=(2,), max_size=2, dtype=np.int64, fill_value=[1, 2]),
]


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_json_round_trip_through_text(space: Space[Any]) -> None:
    text = json.dumps(space.to_jsonable())
    back = space_from_jsonable(json.loads(text))
    assert back == space and type(back) is type(space)


@pytest.mark.parametrize("key", [1, ("a", 1), None])
def test_dict_to_jsonable_refuses_keys_json_would_turn_into_strings(key: Any) -> None:
    # JSON object keys are strings: Dict({1: ...}) came back as Dict({'1': ...}), which is
    # not equal to it and holds none of its samples, while both print alike.
    space = Tuple([Dict({key: Discrete(2)})])
    with pytest.raises(
        TypeError, match=rf"^Dict.to_jsonable needs str keys .* the {type(key).__name__} key"
    ):
        space.to_jsonable()


def test_documented_json_forms() -> None:
    assert Box([-1.0, -2.0], [1.0, 2.0]).to_jsonable() == {
        "type": "Box",
        "low": [-1.0, -2.0],
        "high": [1.0, 2.0],
        "shape": [2],
        "dtype": "float32",
    }
    assert Discrete(3, start=-1).to_jsonable() == {"type": "Discrete", "n": 3, "start": -1}


def test_unknown_type_lists_known_types() -> None:
    msg = (
        re.escape("Unknown space type 'Foo'. Known types: [")
        + ".*'Box'.*"
        + re.escape("]. Register custom spaces with sekai.spaces.register_space_type().")
    )
    with pytest.raises(ValueError, match=msg):
        space_from_jsonable({"type": "Foo"})


def test_space_from_jsonable_needs_a_type() -> None:
    with pytest.raises(ValueError):
        space_from_jsonable({"n": 3})


class Die(Space[int]):
    def __init__(self, faces: int = 6) -> None:
        super().__init__()
        self.faces = faces

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> int:
        return 1 + int(self.rng.integers(self.faces))

    def contains(self, x: Any) -> bool:
        return isinstance(x, int) and 1 <= x <= self.faces

    def to_jsonable(self) -> dict[str, Any]:
        return {"type": "Die", "faces": self.faces}

    @classmethod
    def from_jsonable(cls, d: Mapping[str, Any]) -> Die:
        return cls(d["faces"])


def test_register_space_type_enables_custom_spaces_inside_dicts() -> None:
    register_space_type("Die", Die)
    back = space_from_jsonable(Dict(d=Die(8)).to_jsonable())
    assert isinstance(back["d"], Die) and back["d"].faces == 8


def test_register_space_type_validates_arguments() -> None:
    with pytest.raises(TypeError):
        register_space_type("X", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        register_space_type(3, Die)  # type: ignore[arg-type]


@pytest.mark.parametrize(("d", "field"), [({"type": "Box"}, "dtype"), ({"type": "Discrete"}, "n")])
def test_a_description_missing_a_field_is_a_value_error_naming_it(d: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"has no '{field}' field"):
        space_from_jsonable(d)


@pytest.mark.parametrize(
    ("d", "error", "message"),
    [
        (
            {"type": "Box", "low": [0.5, 0.5], "high": [3, 3], "shape": [2], "dtype": "int32"},
            ValueError,
            r"^Box low has the fractional value 0\.5, but integer dtype int32 needs whole-number",
        ),
        ({"type": "Discrete", "n": 3.7, "start": 0}, TypeError, r"^n must be an int, got float"),
        ({"type": "Discrete", "n": 3, "start": 0.9}, TypeError, r"^start must be an int, got"),
        (
            {"type": "MultiDiscrete", "nvec": [2.5, 3], "start": [0, 0], "dtype": "int64"},
            TypeError,
            r"^MultiDiscrete nvec must hold integers, got dtype float64\.$",
        ),
        (
            {"type": "MultiDiscrete", "nvec": [2, 3], "start": [0, 0.5], "dtype": "int64"},
            TypeError,
            r"^MultiDiscrete start must hold integers, got dtype float64\.$",
        ),
        (
            {
                "type": "Sequence",
                "feature_space": {"type": "Discrete", "n": 2},
                "max_length": 3,
                "stack": "false",
            },
            TypeError,
            r"^stack must be a bool, got str\.$",
        ),
        ({"type": "MultiBinary", "n": [2.0]}, TypeError, r"^MultiBinary n must be an int or a"),
        (
            {
                "type": "MaskedBox",
                "low": 0,
                "high": 5.5,
                "shape": [2],
                "max_size": 2.0,
                "dtype": "int64",
                "fill_value": 0,
            },
            ValueError,
            r"^Box high has the fractional value 5\.5",
        ),
        (
            {
                "type": "MaskedBox",
                "low": 0,
                "high": 5,
                "shape": [2],
                "max_size": 2.0,
                "dtype": "int64",
                "fill_value": 0,
            },
            TypeError,
            r"^max_size must be an int, got 2\.0\.$",
        ),
        (
            {
                "type": "MaskedBox",
                "low": 0,
                "high": 5,
                "shape": [2],
                "max_size": 2,
                "dtype": "int64",
                "fill_value": [1.5, 1],
            },
            ValueError,
            r"^fill_value must hold whole numbers for dtype int64\.$",
        ),
        (
            {"type": "Box", "low": 0, "high": 1, "shape": [2.5], "dtype": "float32"},
            TypeError,
            r"^Box shape entries must be ints, got \[2\.5\]\.$",
        ),
    ],
)
def test_from_jsonable_refuses_what_the_constructor_refuses(
    d: dict[str, Any], error: type[Exception], message: str
) -> None:
    # The JSON values reach the constructor as they are: none is cut, rounded or made a bool.
    with pytest.raises(error, match=message):
        space_from_jsonable(d)


@pytest.mark.parametrize("kind", ["Box", "MaskedBox"])
def test_from_jsonable_clips_out_of_range_integer_bounds_as_the_constructor_does(
    kind: str,
) -> None:
    d = {"type": kind, "low": [-5, -5], "high": [300, 300], "shape": [2], "dtype": "uint8"}
    if kind == "MaskedBox":
        d |= {"max_size": 2, "fill_value": [0, 0]}
    with pytest.warns(UserWarning) as caught:
        space = space_from_jsonable(d)
    assert [str(w.message) for w in caught] == [
        f"Box {name} has values outside the range of uint8; they were clipped to [0, 255]."
        for name in ("low", "high")
    ]
    assert {w.filename for w in caught} == {__file__}  # the caller's line, not sekai's
    element = space.element_space if isinstance(space, MaskedBox) else space
    assert element == Box(0, 255, (2,), np.uint8)


@pytest.mark.parametrize("kind", ["Box", "MaskedBox"])
def test_from_jsonable_reads_strict_json_infinities(kind: str) -> None:
    # Strict JSON has no inf: a writer that refuses the Infinity token writes it as a string.
    d = {
        "type": kind,
        "low": [["-Infinity", 0.0]],
        "high": [["Infinity", 1.0]],
        "shape": [1, 2],
        "dtype": "float64",
    }
    if kind == "MaskedBox":
        d |= {"max_size": 2, "fill_value": [["Infinity", 0.5]]}
    space = space_from_jsonable(d)
    element = space.element_space if isinstance(space, MaskedBox) else space
    assert element == Box([[-np.inf, 0.0]], [[np.inf, 1.0]], dtype=np.float64)
    if isinstance(space, MaskedBox):
        np.testing.assert_array_equal(space.fill_value, [[np.inf, 0.5]])


@pytest.mark.parametrize(
    "space",
    [
        Box(0, 1, (0, 2)),
        MaskedBox(0, 1, (0, 2), max_size=2),
        MaskedBox(0, 1, (2, 0), max_size=1),
        # tolist() writes these as [[]] and [[], []]: lists that hold lists, and no number
        Box(0.0, 1.0, (1, 0, 1)),
        Box(0, 9, (2, 0, 3), np.int64),
        MaskedBox(0.0, 1.0, (1, 0, 1), max_size=2),
    ],
    ids=repr,
)
def test_zero_size_bounds_round_trip(space: Space[Any]) -> None:
    assert space_from_jsonable(json.loads(json.dumps(space.to_jsonable()))) == space


def test_a_nonempty_bound_of_a_zero_size_shape_is_still_refused() -> None:
    d = {"type": "Box", "low": [[1.0, 2.0]], "high": 3.0, "shape": [1, 0, 1], "dtype": "float32"}
    with pytest.raises(ValueError, match=r"low of shape \(1, 2\) cannot be broadcast to shape"):
        space_from_jsonable(d)


@pytest.mark.parametrize(
    ("shape", "low", "found"),
    [
        ((1, 0), [[], [], []], (3, 0)),
        ((1, 0), [[[]]], (1, 1, 0)),
        ((0, 2), [[]], (1, 0)),
        ((2, 0, 3), [[]], (1, 0)),
        ((2, 0, 3), [[[]], [[]]], (2, 1, 0)),
    ],
)
def test_an_empty_bound_of_another_nesting_than_the_shape_is_refused(
    shape: tuple[int, ...], low: Any, found: tuple[int, ...]
) -> None:
    # Only what tolist() writes for the shape (or [], or what broadcasts to it) stands for it.
    message = re.escape(f"low of shape {found} cannot be broadcast to shape {shape}")
    for space in (Box(0.0, 1.0, shape), MaskedBox(0.0, 1.0, shape, max_size=2)):
        d = {**space.to_jsonable(), "low": low}
        with pytest.raises(ValueError, match=message):
            space_from_jsonable(d)


@pytest.mark.parametrize(
    ("shape", "low"), [((3, 0), [[]]), ((3, 0), []), ((2, 0, 3), []), ((2, 0, 3), [[], []])]
)
def test_an_empty_bound_in_the_nesting_of_the_shape_is_taken(
    shape: tuple[int, ...], low: Any
) -> None:
    d = {"type": "Box", "low": low, "high": 1.0, "shape": list(shape), "dtype": "float32"}
    assert space_from_jsonable(d) == Box(0.0, 1.0, shape)


@pytest.mark.parametrize(
    "space",
    [
        Box(np.array([0, 2**63 + 1], np.uint64), np.uint64(2**64 - 1), dtype=np.uint64),
        Box(np.array([1, 2**63 - 1], np.int64), np.int64(2**63 - 1), dtype=np.int64),
        MaskedBox(np.array([0, 2**63 + 1], np.uint64), 2**64 - 1, max_size=2, dtype=np.uint64),
    ],
    ids=repr,
)
def test_64_bit_integer_bounds_round_trip_exactly(space: Space[Any]) -> None:
    # to_jsonable() writes [0, 2**63 + 1]: NumPy made that list float64, so the bound came back
    # as 2**63 and the space as another one.
    back = space_from_jsonable(json.loads(json.dumps(space.to_jsonable())))
    assert back == space


@pytest.mark.parametrize(
    ("d", "message"),
    [
        (
            {"type": "Dict", "spaces": [{"type": "Discrete", "n": 2}]},
            "The 'spaces' field of a Dict description must be a dict of space descriptions by "
            "key, got list [{'type': 'Discrete', 'n': 2}].",
        ),
        (
            {"type": "Tuple", "spaces": 5},
            "The 'spaces' field of a Tuple description must be a list of space descriptions, "
            "got int 5.",
        ),
        (
            {"type": "Tuple", "spaces": {"a": {"type": "Discrete", "n": 2}}},
            "The 'spaces' field of a Tuple description must be a list of space descriptions, "
            "got dict {'a': {'type': 'Discrete', 'n': 2}}.",
        ),
    ],
)
def test_composite_spaces_field_of_another_type_is_named(d: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        space_from_jsonable(d)
