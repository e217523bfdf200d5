"""unflatten: inverse of flatten, always a member (clipping, rounding, NaN handling)."""

from __future__ import annotations

import re
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
    Tuple,
    flatten,
    unflatten,
)


def test_unflatten_integer_box_rounds_and_clips() -> None:
    out = unflatten(Box(0, 10, shape=(2,), dtype=np.int64), np.array([3.6, 40.0]))
    np.testing.assert_array_equal(out, [4, 10])
    assert out.dtype == np.int64


def test_unflatten_integer_box_at_int64_limits() -> None:
    box = Box(-np.inf, np.inf, shape=(3,), dtype=np.int64)
    out = unflatten(box, np.array([1e30, -1e30, np.nan]))
    info = np.iinfo(np.int64)
    assert out.tolist() == [info.max, info.min, 0]
    assert box.contains(out)


def test_unflatten_integer_box_snaps_to_bounds_float64_cannot_hold() -> None:
    # -2**63 + 1 and 2**63 - 2 both round to a float64 beyond the Box.
    box = Box(-(2**63) + 1, 2**63 - 2, shape=(2,), dtype=np.int64)
    out = unflatten(box, np.array([-1e19, 1e19]))
    assert out.tolist() == [-(2**63) + 1, 2**63 - 2]
    assert box.contains(out)


def test_unflatten_float_box_clips_and_replaces_nan_with_zero() -> None:
    box = Box(np.array([1.0, -1.0, -1.0]), np.array([2.0, 1.0, 1.0]))
    out = unflatten(box, np.array([np.nan, 5.0, np.nan]))
    np.testing.assert_array_equal(out, [1.0, 1.0, 0.0])
    assert out.dtype == np.float32 and box.contains(out)


def test_unflatten_reshapes() -> None:
    box = Box(0.0, 10.0, shape=(2, 2))
    assert unflatten(box, np.arange(4.0)).shape == (2, 2)


def test_unflatten_discrete_and_multi_discrete_take_argmax_plus_start() -> None:
    assert unflatten(Discrete(3, start=-1), np.array([0.1, 0.7, 0.2])) == 0
    assert type(unflatten(Discrete(3), np.array([0.0, 0.0, 1.0]))) is np.int64
    md = MultiDiscrete([2, 3], start=[1, -1], dtype=np.int32)
    out = unflatten(md, np.array([0.0, 1.0, 0.2, 0.1, 0.9]))
    np.testing.assert_array_equal(out, [2, 1])
    assert out.dtype == np.int32


def test_unflatten_0d_multi_discrete_gives_a_member_array() -> None:
    md = MultiDiscrete(np.array(4), dtype=np.uint8)
    out = unflatten(md, np.array([0.0, 0.0, 1.0, 0.0]))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.uint8
    assert int(out) == 2 and md.contains(out)


def test_unflatten_multi_binary_thresholds_at_half() -> None:
    out = unflatten(MultiBinary((2, 2)), np.array([0.6, 0.5, 0.0, 1.0]))
    np.testing.assert_array_equal(out, [[1, 0], [0, 1]])
    assert out.dtype == np.int8


def test_unflatten_rejects_wrong_size() -> None:
    with pytest.raises(ValueError, match="needs 3 values"):
        unflatten(Discrete(3), np.zeros(4))


def test_unflatten_composites_round_trip() -> None:
    space = Dict(
        a=Tuple([Discrete(3), Box(-1.0, 1.0, shape=(2,))]), b=MultiBinary(3), c=MultiDiscrete([4])
    )
    space.seed(0)
    x = space.sample()
    back = unflatten(space, flatten(space, x))
    assert space.contains(back)
    assert int(back["a"][0]) == int(x["a"][0])
    np.testing.assert_array_equal(back["b"], x["b"])
    assert isinstance(back["a"], tuple) and list(back) == ["a", "b", "c"]


def test_unflatten_masked_box_restores_fill_in_empty_rows() -> None:
    m = MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=0.5)
    flat = np.array([0.1, 0.2, 0.9, 0.9, 0.3, 0.4, 1.0, 0.0, 1.0], dtype=np.float32)
    out = unflatten(m, flat)
    assert m.contains(out)
    np.testing.assert_array_equal(out["values"][1], [0.5, 0.5])
    np.testing.assert_allclose(out["values"][2], [0.3, 0.4])


def _reference_float_box(space: Box, x: Any) -> Any:
    """The float Box rule as written with np.clip: cast (overflowing to inf), NaN to zero(),
    clip into the bounds."""
    flat = np.asarray(x).reshape(space.shape)
    with np.errstate(over="ignore"):
        out = flat.astype(space.dtype)
    if flat.dtype.kind == "f":
        out = np.where(np.isnan(flat), space.zero(), out)
    return np.asarray(np.clip(out, space.low, space.high), dtype=space.dtype)


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (20,)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_float_box_unflattens_as_np_clip_does_nan_inf_and_zero_signs_included(
    shape: tuple[int, ...], dtype: Any
) -> None:
    rng = np.random.default_rng(0)
    size = int(np.prod(shape))
    bounds = [([-1.0, -0.0, 0.0, -np.inf], [1.0, 0.0, 5.0, np.inf]), (-0.0, np.inf), (0.0, 0.0)]
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 7e4, 0.5, -3.0])
    for low, high in bounds:
        box = Box(
            np.resize(np.array(low), size).reshape(shape),
            np.resize(np.array(high), size).reshape(shape),
            dtype=dtype,
        )
        for source in (np.float16, np.float32, np.float64, np.int64):
            for _ in range(40):
                x = rng.choice(specials, size)
                with np.errstate(over="ignore", invalid="ignore"):
                    x = np.nan_to_num(x, nan=0.0) if source is np.int64 else x
                    x = x.astype(source) if source is not np.int64 else x.clip(-9e18, 9e18)
                x = np.asarray(x).astype(source)
                given = x.copy()
                out, expected = unflatten(box, x), _reference_float_box(box, x)
                assert type(out) is np.ndarray and out.dtype == box.dtype
                assert out.shape == expected.shape == shape
                assert np.array_equal(out, expected, equal_nan=True)
                assert np.array_equal(np.signbit(out), np.signbit(expected))
                assert np.array_equal(x, given, equal_nan=True)  # the input is left alone


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        (np.int8, -128, 127),
        (np.uint16, 3, 60_000),
        (np.int64, -(2**53), 2**53),  # the widest bounds float64 holds: clipped, no snapping
        (np.int64, -(2**53) - 1, 5),  # past them: snapped
        (np.uint64, 0, 2**64 - 1),
    ],
)
def test_an_integer_box_rounds_nan_to_zero_and_clips_to_its_exact_bounds(
    dtype: Any, low: int, high: int
) -> None:
    box = Box(low, high, shape=(6,), dtype=dtype)
    specials = np.array([np.nan, np.inf, -np.inf, 0.5, 1.5, -2.5, 1e19, -1e19, 2.0**53, 7.4])
    zero = box.zero().tolist()
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = rng.choice(specials, 6)
        expected = [
            zero[i] if np.isnan(v) else high if v >= high else low if v <= low else int(np.rint(v))
            for i, v in enumerate(x.tolist())
        ]
        out = unflatten(box, x)
        assert out.dtype == box.dtype and out.tolist() == expected


@pytest.mark.parametrize("nvec", [[3, 3, 3, 3], [[2, 2], [2, 2]], 4, [5, 2, 3]])
@pytest.mark.parametrize("source", [np.float32, np.float64, np.int64, np.bool_])
def test_multi_discrete_takes_each_blocks_first_argmax_nan_and_ties_included(
    nvec: Any, source: Any
) -> None:
    md = MultiDiscrete(nvec, start=np.full(np.shape(nvec), -1))
    counts = md.nvec.reshape(-1).tolist()
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, 0.5])
    rng = np.random.default_rng(0)
    for _ in range(100):
        x = rng.choice(specials, sum(counts))
        if source is not np.float32 and source is not np.float64:
            x = np.nan_to_num(x, posinf=3.0, neginf=-3.0).astype(source)
        else:
            x = x.astype(source)
        ends = np.cumsum(counts)
        expected = [int(np.argmax(x[end - n : end])) - 1 for end, n in zip(ends, counts)]
        out = unflatten(md, x)
        assert out.shape == md.shape and out.reshape(-1).tolist() == expected


@pytest.mark.parametrize(
    "box", [Box(0, 3, (2,), np.int64), Box(0, 3, (2,), np.int16), Box(-1.0, 1.0, (2,), np.float32)]
)
@pytest.mark.parametrize("missing", [None, float("nan")])
def test_an_object_array_holding_none_or_nan_unflattens_to_a_member(box: Box, missing: Any) -> None:
    # core.md: unflatten always returns a member, NaN becoming zero: a NaN that appears only
    # when NumPy makes the object array float64 counts too.
    out = unflatten(box, np.array([missing, 1], dtype=object))
    assert box.contains(out) and out.tolist() == [0, 1]


@pytest.mark.parametrize(
    "space", [Box(-1.0, 1.0, (2,)), Discrete(2), MultiDiscrete([2]), MultiBinary(2)]
)
@pytest.mark.parametrize(
    "x", [np.array(["0.5", "1"]), np.array([object(), 1], dtype=object)], ids=["str", "object"]
)
def test_values_that_are_not_numbers_are_refused_naming_unflatten_and_the_space(
    space: Any, x: Any
) -> None:
    with pytest.raises(TypeError, match=r"unflatten needs real numbers for .*\(") as info:
        unflatten(space, x)
    assert repr(space) in str(info.value)


@pytest.mark.parametrize(
    "x",
    [
        [None, "7"],
        np.array(["4", "7"], dtype=object),
        [0, np.datetime64("2020-01-01")],
        [None, np.timedelta64(7, "s")],
        np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
        [1j, None],
    ],
    ids=["none-str", "object-str", "date", "timedelta", "date-array", "complex"],
)
def test_strings_dates_and_complex_numbers_among_objects_are_refused_not_parsed(x: Any) -> None:
    with pytest.raises(TypeError, match=r"unflatten needs real numbers for Box\(0, 10"):
        unflatten(Box(0, 10, (2,), np.int64), x)


def test_numbers_of_other_types_in_an_object_array_are_the_numbers_they_hold() -> None:
    from decimal import Decimal
    from fractions import Fraction

    held = np.array(3.0, dtype=object)
    items = [np.True_, np.array(1.5), np.int8(2), Fraction(1, 2), Decimal("2.5"), held, None]
    out = unflatten(Box(-5.0, 5.0, (7,), np.float64), np.array(items, dtype=object))
    assert out.tolist() == [1.0, 1.5, 2.0, 0.5, 2.5, 3.0, 0.0]
    assert unflatten(MultiBinary(2), [np.True_, None]).tolist() == [1, 0]


def test_complex_values_are_refused_as_box_refuses_a_complex_dtype() -> None:
    with pytest.raises(TypeError, match=r"got an array of dtype complex128\.$"):
        unflatten(Box(0.0, 10.0, (2,)), np.array([3 + 4j, 2]))


def test_an_int_too_large_for_a_float64_is_refused_naming_unflatten_and_the_space() -> None:
    for space in (Box(0, 10, (2,), np.int64), Discrete(2)):
        with pytest.raises(
            ValueError,
            match=rf"^unflatten needs values a float64 holds for {re.escape(repr(space))}, got",
        ):
            unflatten(space, [10**400, 1])


def test_a_decimal_too_large_for_a_float64_is_refused_as_such_an_int_is() -> None:
    from decimal import Decimal

    # float() makes it infinite, which the Box's bounds then clipped without a word
    for space in (Box(-1.0, 1.0, (2,)), Discrete(2)):
        for large in (Decimal("1e400"), Decimal("-1e400")):
            with pytest.raises(
                ValueError,
                match=rf"^unflatten needs values a float64 holds for {re.escape(repr(space))}, "
                "got a number too large",
            ):
                unflatten(space, np.array([large, 0], dtype=object))
    infinite = np.array([Decimal("Infinity"), 0], dtype=object)
    assert unflatten(Box(-1.0, 1.0, (2,)), infinite).tolist() == [1.0, 0.0]


def test_a_decimal_in_a_0d_object_array_is_read_as_that_decimal() -> None:
    from decimal import Decimal

    # the item was cast as the array's float: a Decimal too large became inf, then clipped
    box = Box(-1e9, 1e9, (2,), np.float64)
    held = np.array(np.array(Decimal("1e400"), dtype=object), dtype=object)  # twice wrapped
    for large in (np.array(Decimal("1e400"), dtype=object), held):
        with pytest.raises(ValueError, match="got a number too large for a float64"):
            unflatten(box, [0.1, large])
    assert unflatten(box, [0.1, np.array(Decimal("sNaN"), dtype=object)]).tolist() == [0.1, 0.0]


def test_a_signaling_nan_decimal_is_nan_as_a_quiet_one_is() -> None:
    from decimal import Decimal

    box = Box(-1.0, 1.0, (2,))
    for nan in (Decimal("NaN"), Decimal("sNaN")):  # float() refuses only the signaling one
        assert unflatten(box, np.array([nan, 0.5], dtype=object)).tolist() == [0.0, 0.5]
