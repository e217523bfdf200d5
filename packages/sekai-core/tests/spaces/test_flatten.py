"""flatdim / flatten / flatten_space: layouts, dtype, errors, custom registrations."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import sekai
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
    flatdim,
    flatten,
    flatten_space,
    unflatten,
)


@pytest.fixture
def custom(make_space_type: Callable[..., type[Space[Any]]]) -> type[Space[Any]]:
    """A flattenable space the flatten utilities do not know (until a test registers it)."""
    return make_space_type("Custom", (0,), flattenable=True)


def test_flatten_discrete_is_one_hot_from_start() -> None:
    out = flatten(Discrete(3, start=-1), -1)
    np.testing.assert_array_equal(out, [1.0, 0.0, 0.0])
    assert out.dtype == np.float32


def test_flatten_rejects_non_members_of_discrete() -> None:
    with pytest.raises(ValueError):
        flatten(Discrete(3), 3)
    with pytest.raises(ValueError):
        flatten(Discrete(3), -1)


@pytest.mark.parametrize("x", [1.5, np.float32(0.5), np.nan, np.array([1]), "1", None])
def test_flatten_rejects_non_integral_or_non_scalar_discrete_values(x: Any) -> None:
    msg = f"Cannot flatten {x!r}: it is not a member of Discrete(3)."
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(Discrete(3), x)
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(Dict(k=Discrete(3)), {"k": x})


def test_flatten_discrete_accepts_integral_numbers() -> None:
    for x in (2, np.int8(2), np.uint64(2), np.array(2), 2.0, np.float32(2.0)):
        np.testing.assert_array_equal(flatten(Discrete(3), x), [0, 0, 1])
    np.testing.assert_array_equal(flatten(Discrete(3), np.True_), [0, 1, 0])


def test_flatten_multi_discrete_concatenates_one_hots() -> None:
    md = MultiDiscrete([[2, 3], [1, 2]], start=[[1, 0], [0, -1]])
    out = flatten(md, np.array([[2, 0], [0, 0]]))
    np.testing.assert_array_equal(out, [0, 1, 1, 0, 0, 1, 0, 1])
    with pytest.raises(ValueError):
        flatten(md, np.array([[3, 0], [0, 0]]))


@pytest.mark.parametrize(
    ("x", "why"),
    [
        (np.array([1, 0, 0, 0]), "a value of shape (4,)"),
        (1, "a value of shape ()"),
        (np.array([[2.0, 0.5], [0.0, 0.0]]), "array([[2. , 0.5],"),
        (np.array([[2.0, np.nan], [0.0, 0.0]]), "array([[ 2., nan],"),
        (np.array([[2.0, np.inf], [0.0, 0.0]]), "array([[ 2., inf],"),
        (np.array([["2", "0"], ["0", "0"]]), "array([['2', '0'],"),
    ],
)
def test_flatten_multi_discrete_rejects_wrong_shapes_and_non_integral_values(
    x: Any, why: str
) -> None:
    md = MultiDiscrete([[2, 3], [1, 2]], start=[[1, 0], [0, -1]])
    with pytest.raises(ValueError, match=re.escape(f"Cannot flatten {why}")):
        flatten(md, x)
    with pytest.raises(ValueError, match=re.escape(f"Cannot flatten {why}")):
        flatten(Tuple([md]), (x,))


def test_flatten_multi_discrete_accepts_integral_floats_and_other_int_dtypes() -> None:
    md = MultiDiscrete([2, 3], start=[1, 0], dtype=np.uint8)
    expected = [0, 1, 0, 0, 1]
    for x in (np.array([2, 2], dtype=np.uint8), np.array([2.0, 2.0]), [2, 2]):
        np.testing.assert_array_equal(flatten(md, x), expected)
    np.testing.assert_array_equal(
        flatten(MultiDiscrete([2], dtype=np.uint64), np.array([1], dtype=np.uint64)), [0, 1]
    )


def test_flatten_box_and_multi_binary_ravel_as_float32() -> None:
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    out = flatten(Box(0.0, 10.0, shape=(2, 3), dtype=np.float64), x)
    np.testing.assert_array_equal(out, np.arange(6))
    assert out.dtype == np.float32
    out_mb = flatten(MultiBinary((2, 2)), np.array([[1, 0], [0, 1]], dtype=np.int8))
    np.testing.assert_array_equal(out_mb, [1, 0, 0, 1])
    assert out_mb.dtype == np.float32


@pytest.mark.parametrize("x", [np.zeros(3), np.zeros((2, 1)), 0.5, [0.5]])
def test_flatten_box_rejects_wrong_shapes(x: Any) -> None:
    box = Box(0.0, 1.0, shape=(2,))
    shape = np.shape(x)
    msg = f"Cannot flatten a value of shape {shape}: it is not a member of {box!r} (shape (2,))."
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(box, x)
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(Tuple([Discrete(2), box]), (0, x))


def test_flatten_box_accepts_lists_and_scalars_of_its_shape() -> None:
    np.testing.assert_array_equal(flatten(Box(0.0, 1.0, shape=(2,)), [0.5, 1]), [0.5, 1.0])
    np.testing.assert_array_equal(flatten(Box(0.0, 1.0, shape=()), 0.5), [0.5])
    np.testing.assert_array_equal(flatten(Dict(b=Box(0.0, 1.0, shape=())), {"b": 0.5}), [0.5])


@pytest.mark.parametrize(
    ("x", "why"),
    [
        (np.array([1, 0, 1]), "a value of shape (3,)"),
        (np.array([[1, 0]]), "a value of shape (1, 2)"),
        (1, "a value of shape ()"),
        (np.array([1, 2]), "array([1, 2])"),
        (np.array([1.0, 0.5]), "array([1. , 0.5])"),
        (np.array([-1, 0]), "array([-1,  0])"),
    ],
)
def test_flatten_multi_binary_rejects_non_members(x: Any, why: str) -> None:
    space = MultiBinary(2)
    with pytest.raises(ValueError, match=re.escape(f"Cannot flatten {why}: it is not a member of")):
        flatten(space, x)
    with pytest.raises(ValueError, match=re.escape(f"Cannot flatten {why}: it is not a member of")):
        flatten(Dict(m=space), {"m": x})


def test_flatten_multi_binary_accepts_bools_and_integral_floats() -> None:
    for x in ([1, 0], np.array([True, False]), np.array([1.0, 0.0])):
        np.testing.assert_array_equal(flatten(MultiBinary(2), x), [1, 0])


def test_flatten_of_values_beyond_float32_gives_inf_without_a_warning() -> None:
    # flatten_space and unflatten ignore the cast's overflow; flatten warned on every step
    # (pytest turns the warning into an error here).
    big = np.finfo(np.float64).max
    box = Box(-big, big, shape=(2,), dtype=np.float64)
    x = np.array([big, -1e300])
    assert flatten(box, x).tolist() == [np.inf, -np.inf]
    assert flatten(Dict(b=box), {"b": x}).tolist() == [np.inf, -np.inf]
    assert flatten_space(box).contains(flatten(box, x))
    for value in (x.tolist(), x.astype(np.longdouble), x.astype(object)):  # not float64 arrays
        assert flatten(box, value).tolist() == [np.inf, -np.inf]
        assert flatten(Dict(b=box), {"b": value}).tolist() == [np.inf, -np.inf]
    scalar = Box(-big, big, shape=(), dtype=np.float64)
    for number in (big, np.float64(big)):
        assert flatten(scalar, number).tolist() == [np.inf]
        assert flatten(Tuple([scalar]), (number,)).tolist() == [np.inf]


def test_flatten_casts_what_cannot_overflow_float32_without_np_errstate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # np.errstate costs several times the cast of a small array, on every step of
    # FlattenObservation: only sources wider than float32 need it.
    entered: list[Any] = []
    errstate = np.errstate

    def counted(**kwargs: Any) -> Any:
        entered.append(kwargs)
        return errstate(**kwargs)

    box = Box(-1.0, 1.0, shape=(2,))
    in_dict, in_tuple = Dict(b=box), Tuple([box])
    monkeypatch.setattr(np, "errstate", counted)
    for dtype in (np.float32, np.float16, np.int64, np.uint8, np.bool_):
        x = np.ones(2, dtype)
        assert flatten(box, x).tolist() == [1.0, 1.0]
        assert flatten(in_dict, {"b": x}).tolist() == [1.0, 1.0]
        assert flatten(in_tuple, (x,)).tolist() == [1.0, 1.0]
    assert not entered
    assert flatten(box, np.ones(2)).tolist() == [1.0, 1.0]  # float64: may overflow
    assert entered


def test_flatten_never_aliases_the_sample() -> None:
    x = np.zeros(3, dtype=np.float32)
    out = flatten(Box(-1.0, 1.0, shape=(3,)), x)
    out[0] = 1.0
    assert x[0] == 0.0


def test_flatten_dict_concatenates_in_key_order() -> None:
    d = Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3))
    out = flatten(d, {"k": 1, "pos": np.array([0.5, -0.5], dtype=np.float32)})
    np.testing.assert_array_equal(out, [0.5, -0.5, 0.0, 1.0, 0.0])
    assert out.dtype == np.float32
    assert flatdim(d) == 5


def test_flatten_nested_dict_and_tuple() -> None:
    space = Tuple([Dict(a=Discrete(2), b=Tuple([MultiBinary(2)])), Box(0.0, 1.0, shape=(1,))])
    x = ({"a": 1, "b": (np.array([1, 1], dtype=np.int8),)}, np.array([0.5], dtype=np.float32))
    np.testing.assert_array_equal(flatten(space, x), [0, 1, 1, 1, 0.5])
    assert flatdim(space) == 5


def test_flatten_tuple_rejects_wrong_length() -> None:
    with pytest.raises(ValueError):
        flatten(Tuple([Discrete(2), Discrete(2)]), (1,))


@pytest.mark.parametrize(
    ("x", "why"),
    [
        ({"a": 1}, " (its keys are ['a'], not ['a', 'b'])."),
        ({"a": 1, "b": np.zeros(2), "typo": 7}, " (its keys are ['a', 'b', 'typo'], not"),
        ({"a": 1, "typo": np.zeros(2)}, " (its keys are ['a', 'typo'], not ['a', 'b'])."),
        ([1, np.zeros(2)], "."),
    ],
)
def test_flatten_dict_needs_exactly_its_keys(x: Any, why: str) -> None:
    # A missing key was a bare KeyError, a list a TypeError, and extra keys were ignored.
    d = Dict(a=Discrete(3), b=Box(0.0, 1.0, (2,)))
    msg = f"Cannot flatten {x!r}: it is not a member of {d!r}{why}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(d, x)
    with pytest.raises(ValueError, match=re.escape(msg)):
        flatten(Tuple([d]), (x,))


def test_flatten_space_examples() -> None:
    d = Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3))
    assert repr(flatten_space(d)) == "Box([-1.0, -1.0, 0.0, 0.0, 0.0], 1.0, (5,), float32)"
    assert flatten_space(Discrete(4)) == Box(0.0, 1.0, shape=(4,))
    assert flatten_space(MultiDiscrete([2, 3])) == Box(0.0, 1.0, shape=(5,))
    assert flatten_space(MultiBinary((2, 3))) == Box(0.0, 1.0, shape=(6,))
    assert flatten_space(Box(0, 5, shape=(2, 2), dtype=np.int64)) == Box(0.0, 5.0, shape=(4,))
    assert flatten_space(Dict()) == Box([], [], (0,), np.float32)
    assert flatten_space(Tuple([])) == Box([], [], (0,), np.float32)


def test_flatten_space_is_float32() -> None:
    assert flatten_space(Box(0.0, 1.0, shape=(2,), dtype=np.float64)).dtype == np.float32


def test_flatdim_values() -> None:
    assert flatdim(Box(0.0, 1.0, shape=(2, 3))) == 6
    assert flatdim(Discrete(5)) == 5
    assert flatdim(MultiDiscrete([2, 3])) == 5
    assert flatdim(MultiBinary((2, 3))) == 6
    assert flatdim(MaskedBox(0.0, 1.0, shape=(2,), max_size=3)) == 9


@pytest.mark.parametrize("fn", [flatdim, flatten_space])
def test_unregistered_space_raises_not_implemented(fn: Any, custom: type[Space[Any]]) -> None:
    name = fn.__name__
    with pytest.raises(NotImplementedError, match=re.escape(f"{name} not implemented for Custom")):
        fn(custom())


def test_unregistered_flatten_and_unflatten_raise_not_implemented(custom: type[Space[Any]]) -> None:
    with pytest.raises(NotImplementedError, match="flatten not implemented for Custom"):
        flatten(custom(), 0)
    with pytest.raises(NotImplementedError, match="unflatten not implemented for Custom"):
        unflatten(custom(), np.zeros(1))


def test_sequence_is_not_flattenable_and_names_pad_sequence() -> None:
    seq = Sequence(Discrete(3))
    for call in (
        lambda: flatdim(seq),
        lambda: flatten(seq, ()),
        lambda: flatten_space(seq),
        lambda: unflatten(seq, np.zeros(3)),
        lambda: flatten(Dict(s=seq), {"s": ()}),
    ):
        with pytest.raises(TypeError, match="PadSequenceObservation"):
            call()


def test_custom_space_registration_is_used_inside_dict(custom: type[Space[Any]]) -> None:
    @flatdim.register(custom)
    def _flatdim_custom(space: Space[Any]) -> int:
        return 2

    @flatten.register(custom)
    def _flatten_custom(space: Space[Any], x: Any) -> np.ndarray:
        return np.array([7.0, 8.0], dtype=np.float32)

    d = Dict(a=Discrete(2), c=custom())
    np.testing.assert_array_equal(flatten(d, {"a": 0, "c": 0}), [1, 0, 7, 8])
    assert sekai.spaces.flatdim(custom()) == 2


def test_registered_override_for_box_subclass_is_respected_in_dict() -> None:
    class Scaled(Box):
        pass

    @flatten.register(Scaled)
    def _flatten_scaled(space: Scaled, x: Any) -> np.ndarray:
        return 2 * np.asarray(x, dtype=np.float32).reshape(-1)

    d = Dict(a=Scaled(0.0, 1.0, shape=(2,)))
    np.testing.assert_array_equal(flatten(d, {"a": np.array([0.25, 0.5])}), [0.5, 1.0])


def test_dict_flatten_follows_item_replacement() -> None:
    d = Dict(a=Discrete(2), b=Discrete(2))
    assert flatdim(d) == 4
    d["a"] = Discrete(3)
    assert flatdim(d) == 5
    outer = Dict(inner=d)
    flatten(outer, {"inner": {"a": 0, "b": 0}})
    d["c"] = Discrete(2)
    assert flatdim(outer) == 7
    np.testing.assert_array_equal(
        flatten(outer, {"inner": {"a": 2, "b": 1, "c": 0}}), [0, 0, 1, 0, 1, 1, 0]
    )


def test_flatten_matches_gymnasium_layout() -> None:
    ours = Dict(pos=Box(-1.0, 1.0, shape=(2,)), k=Discrete(3), m=MultiDiscrete([2, 3]))
    theirs = gymnasium.spaces.Dict(
        {
            "pos": gymnasium.spaces.Box(-1.0, 1.0, shape=(2,)),
            "k": gymnasium.spaces.Discrete(3),
            "m": gymnasium.spaces.MultiDiscrete([2, 3]),
        }
    )
    x = {"pos": np.array([0.1, 0.2], dtype=np.float32), "k": 2, "m": np.array([1, 2])}
    expected = np.concatenate([gymnasium.spaces.flatten(theirs[k], x[k]) for k in ours])
    np.testing.assert_allclose(flatten(ours, x), expected)
