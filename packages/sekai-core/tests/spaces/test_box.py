"""Box: construction, validation, sampling, membership, repr, equality, pickling."""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import sekai
from sekai.spaces import Box, zero_sample

CARTPOLE_HIGH = np.array([4.8, np.inf, 0.41887903, np.inf], dtype=np.float32)


def cartpole_box() -> Box:
    return Box(-CARTPOLE_HIGH, CARTPOLE_HIGH, dtype=np.float32)


# -- construction --------------------------------------------------------------------------


def test_box_default_dtype_is_float32() -> None:
    box = Box(-1.0, 1.0, shape=(3,))
    assert box.dtype == np.float32
    assert box.low.dtype == np.float32 and box.high.dtype == np.float32
    assert box.shape == (3,)


def test_box_scalar_bounds_broadcast_to_shape() -> None:
    box = Box(-2, 3, shape=(2, 2))
    np.testing.assert_array_equal(box.low, np.full((2, 2), -2.0, dtype=np.float32))
    np.testing.assert_array_equal(box.high, np.full((2, 2), 3.0, dtype=np.float32))


def test_box_accepts_int_shape() -> None:
    assert Box(0.0, 1.0, shape=3).shape == (3,)


def test_box_shape_entries_become_python_ints() -> None:
    box = Box(0.0, 1.0, shape=(np.int64(2), np.int32(3)))
    assert box.shape == (2, 3)
    assert all(type(s) is int for s in box.shape)


def test_box_zero_size_is_valid() -> None:
    box = Box([], [], (0,), np.float32)
    assert box.shape == (0,)
    assert repr(box) == "Box([], [], (0,), float32)"
    assert box.sample().shape == (0,)
    assert box.contains(np.zeros(0, dtype=np.float32))


def test_box_rejects_negative_shape_entry() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        Box(0.0, 1.0, shape=(2, -1))


def test_box_rejects_non_integer_shape() -> None:
    with pytest.raises(TypeError):
        Box(0.0, 1.0, shape=(2.5,))


def test_box_shape_inferred_from_bounds() -> None:
    assert Box(np.zeros((2, 3)), np.ones((2, 3))).shape == (2, 3)


def test_box_scalar_bound_goes_with_array_bound_without_shape() -> None:
    box = Box(0.0, np.array([1.0, 2.0]))
    assert box.shape == (2,)
    np.testing.assert_array_equal(box.low, [0.0, 0.0])


def test_box_rejects_mismatched_bound_shapes() -> None:
    msg = (
        "low.shape (2,) != high.shape (1,). Provide an explicit shape= if broadcasting is intended."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        Box(np.zeros(2), np.ones(1))


def test_box_rejects_bound_not_broadcastable_to_shape() -> None:
    with pytest.raises(ValueError, match="cannot be broadcast"):
        Box(np.zeros(3), 1.0, shape=(2,))


def test_box_rejects_low_above_high() -> None:
    with pytest.raises(ValueError, match=re.escape("low must be <= high for all dimensions.")):
        Box(np.array([0.0, 2.0]), np.array([1.0, 1.0]))


@pytest.mark.parametrize("name", ["low", "high"])
def test_box_rejects_nan_bounds(name: str) -> None:
    bounds = {"low": 0.0, "high": 1.0, name: np.nan}
    msg = f"Box {name} contains NaN; use -np.inf/np.inf for unbounded dimensions."
    with pytest.raises(ValueError, match=re.escape(msg)):
        Box(bounds["low"], bounds["high"], shape=(2,))


@pytest.mark.parametrize("dtype", [bool, np.complex128, str, object, "datetime64[s]"])
def test_box_rejects_non_numeric_dtypes(dtype: object) -> None:
    with pytest.raises(TypeError, match="integer or floating dtype"):
        Box(0, 1, shape=(2,), dtype=dtype)


def test_box_bool_dtype_error_points_to_multibinary() -> None:
    with pytest.raises(TypeError, match="MultiBinary"):
        Box(0, 1, shape=(2,), dtype=bool)


def test_box_rejects_fractional_bounds_for_integer_dtype() -> None:
    with pytest.raises(ValueError, match=re.escape("0.5")):
        Box(0.5, 1.5, shape=(2,), dtype=np.int64)


def test_box_integer_infinite_bounds_map_to_dtype_limits() -> None:
    box = Box(-np.inf, np.inf, shape=(2,), dtype=np.int64)
    info = np.iinfo(np.int64)
    assert (box.low == info.min).all() and (box.high == info.max).all()
    assert repr(box) == "Box(-9223372036854775808, 9223372036854775807, (2,), int64)"


def test_box_integer_out_of_range_bounds_are_clipped_with_warning() -> None:
    msg = "Box low has values outside the range of uint8; they were clipped to [0, 255]."
    with pytest.warns(UserWarning, match=re.escape(msg)):
        box = Box(-5, 255, shape=(2,), dtype=np.uint8)
    assert (box.low == 0).all()


@pytest.mark.parametrize(
    "low, high, dtype, name",
    [
        (0, 2**64, np.uint64, "high"),
        (0, 2**70, np.int64, "high"),
        (-(2**70), 0, np.int64, "low"),
    ],
)
def test_box_integer_bounds_beyond_64_bits_are_clipped_with_warning(
    low: int, high: int, dtype: Any, name: str
) -> None:
    info = np.iinfo(dtype)
    msg = (
        f"Box {name} has values outside the range of {np.dtype(dtype)}; they were clipped to "
        f"[{info.min}, {info.max}]."
    )
    with pytest.warns(UserWarning, match=re.escape(msg)):
        box = Box(low, high, shape=(2,), dtype=dtype)
    assert box.low.dtype == dtype
    assert box.low.tolist() == [max(low, info.min)] * 2
    assert box.high.tolist() == [min(high, info.max)] * 2


def test_box_bounds_beyond_64_bits_keep_the_other_entries_exact() -> None:
    with pytest.warns(UserWarning, match="outside the range of uint64"):
        box = Box(0, [2**64, 2**63 + 1], dtype=np.uint64)
    assert box.high.tolist() == [2**64 - 1, 2**63 + 1]


def test_float_box_bounds_beyond_64_bits_are_clipped_to_the_largest_floats() -> None:
    # An int is a finite bound: beyond float64's range it is clipped, not made infinite.
    big = float(np.finfo(np.float64).max)
    with pytest.warns(UserWarning) as caught:
        box = Box([-(2**1100), 0.5], [2**70, 2**1100], dtype=np.float64)
    assert box.low.tolist() == [-big, 0.5]
    assert box.high.tolist() == [2.0**70, big]
    assert [str(w.message) for w in caught] == [
        f"Box {name} has values outside the range of float64; they were clipped to "
        f"[{-big!r}, {big!r}]."
        for name in ("low", "high")
    ]


@pytest.mark.parametrize(
    ("low", "high", "dtype", "names", "expected"),
    [
        (70000.0, 80000.0, np.float16, ["low", "high"], ([65504.0] * 2, [65504.0] * 2)),
        (-1e39, [1.0, 3e38], np.float32, ["low"], None),
        ([-np.inf, -7e4], [np.inf, 1e5], np.float16, ["low", "high"], None),
        (np.float64(-1e300), 1e300, np.float32, ["low", "high"], None),
    ],
)
def test_float_box_finite_bounds_beyond_the_dtype_are_clipped_with_warning(
    low: Any, high: Any, dtype: Any, names: list[str], expected: Any
) -> None:
    # As for integer dtypes: never a silent +-inf (a lower bound of +inf held only inf).
    info = np.finfo(dtype)
    with pytest.warns(UserWarning) as caught:
        box = Box(low, high, shape=(2,), dtype=dtype)
    assert [str(w.message) for w in caught] == [
        f"Box {name} has values outside the range of {np.dtype(dtype)}; they were clipped to "
        f"[{float(info.min)!r}, {float(info.max)!r}]."
        for name in names
    ]
    assert {w.filename for w in caught} == {__file__}
    for bound, given in ((box.low, low), (box.high, high)):
        given = np.broadcast_to(np.asarray(given, np.float64), 2)
        clipped = np.where(np.isinf(given), given, np.clip(given, info.min, info.max))
        np.testing.assert_array_equal(bound, clipped.astype(dtype))
    if expected is not None:
        assert (box.low.tolist(), box.high.tolist()) == expected
    assert box.contains(box.sample())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_box_at_the_largest_floats_rebuilds_from_its_repr_without_warning(
    dtype: Any,
) -> None:
    info = np.finfo(dtype)
    box = Box(info.min, info.max, shape=(2,), dtype=dtype)
    names = {"Box": Box, np.dtype(dtype).name: dtype}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = eval(repr(box), names)
    assert again == box and again.high.tolist() == [float(info.max)] * 2


@pytest.mark.parametrize(
    ("bound", "dtype"),
    [
        (3.4028235e38, np.float32),  # float32's largest value as it prints
        (65519.0, np.float16),  # NumPy rounds it to 65504
        (65519, np.float16),
        (2**128 - 2**103 - 1, np.float32),  # an exact int just below the overflow
        (2**1024 - 2**970 - 1, np.float64),
    ],
    ids=["float32-as-printed", "float16", "float16-int", "float32-int", "float64-int"],
)
def test_float_box_bounds_that_round_to_a_finite_value_do_not_warn(bound: Any, dtype: Any) -> None:
    largest = float(np.finfo(dtype).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        box = Box(-bound, bound, shape=(2,), dtype=dtype)
    assert box.low.tolist() == [-largest] * 2 and box.high.tolist() == [largest] * 2


@pytest.mark.parametrize(
    ("bound", "dtype"),
    [
        (65520.0, np.float16),  # half a unit above the largest value: rounds to inf
        (65520, np.float16),
        (2**128 - 2**103, np.float32),
        (float(2**128 - 2**103), np.float32),
        (2**1024 - 2**970, np.float64),
    ],
    ids=["float16", "float16-int", "float32-int", "float32", "float64-int"],
)
def test_float_box_bounds_that_would_round_to_inf_warn(bound: Any, dtype: Any) -> None:
    largest = float(np.finfo(dtype).max)
    with pytest.warns(UserWarning, match="outside the range of") as caught:
        box = Box(-bound, bound, shape=(2,), dtype=dtype)
    assert len(caught) == 2
    assert box.low.tolist() == [-largest] * 2 and box.high.tolist() == [largest] * 2


def test_integer_box_bounds_mixing_floats_and_huge_ints_are_clipped_with_warning() -> None:
    msg = "Box high has values outside the range of int64; they were clipped to"
    with pytest.warns(UserWarning, match=f"^{msg}"):
        box = Box([0.0, -np.inf], [2.0, 2**1100], dtype=np.int64)
    assert box.low.tolist() == [0, np.iinfo(np.int64).min]
    assert box.high.tolist() == [2, np.iinfo(np.int64).max]
    with pytest.raises(ValueError, match=r"^Box low has the fractional value 0\.5, but integer"):
        Box([0.5, -(2**1100)], 3, dtype=np.int64)


def test_float_box_infinite_and_in_range_bounds_do_not_warn() -> None:
    # -inf/inf are unbounded dimensions; a dimension pinned at an infinity is kept (gymnasium).
    Box([-np.inf, np.inf, -np.inf], [np.inf, np.inf, -np.inf], dtype=np.float16)
    Box(-65504.0, 65504.0, (2,), np.float16)
    Box(-float(np.finfo(np.float32).max), np.finfo(np.float32).max, (2,))


def test_box_rejects_non_numeric_object_bounds() -> None:
    with pytest.raises(
        TypeError, match=r"^Box high must be numeric, got an array of dtype object\.$"
    ):
        Box(0, [2**70, None], dtype=np.int64)


def test_box_integer_infinite_bounds_do_not_warn() -> None:
    box = Box(0, np.inf, shape=(1,), dtype=np.uint8)
    assert int(box.high[0]) == 255


def test_box_bounds_are_read_only() -> None:
    box = Box(0.0, 1.0, shape=(2,))
    with pytest.raises(ValueError):
        box.low[0] = -1.0


# -- attributes ----------------------------------------------------------------------------


def test_box_is_bounded_reports_both_sides() -> None:
    assert cartpole_box().is_bounded == (False, False)
    assert Box(0.0, np.inf, shape=(2,)).is_bounded == (True, False)
    assert Box(-np.inf, 0.0, shape=(2,)).is_bounded == (False, True)
    assert Box(0.0, 1.0, shape=(2,)).is_bounded == (True, True)
    assert Box(-np.inf, np.inf, shape=(2,), dtype=np.int32).is_bounded == (True, True)


def test_box_zero_is_zeros_clipped_into_bounds() -> None:
    box = Box(np.array([1.0, -3.0, -1.0]), np.array([2.0, -2.0, 1.0]))
    np.testing.assert_array_equal(box.zero(), np.array([1.0, -2.0, 0.0], dtype=np.float32))
    assert box.zero().dtype == np.float32
    z = box.zero()
    z[0] = 5.0  # a fresh copy each time
    assert box.zero()[0] == 1.0


def test_box_zero_of_a_0d_box_is_a_writable_0d_array() -> None:
    box = Box(0.5, 1.0, shape=())
    for z in (box.zero(), zero_sample(box)):
        assert isinstance(z, np.ndarray) and z.shape == () and z.dtype == np.float32
        assert float(z) == 0.5 and box.contains(z)
        z[...] = 0.75  # np.clip gave a NumPy scalar, which refuses item assignment
    assert float(box.zero()) == 0.5


def test_box_is_flattenable() -> None:
    assert Box(0.0, 1.0, shape=(2,)).is_flattenable


# -- sampling ------------------------------------------------------------------------------


def test_box_sample_is_member_with_dtype() -> None:
    for box in [
        cartpole_box(),
        Box(0.0, 1.0, shape=(3,), dtype=np.float64),
        Box(0, 255, shape=(4, 4), dtype=np.uint8),
        Box(-np.inf, np.inf, shape=(3,), dtype=np.int64),
        Box(0.0, np.inf, shape=(3,)),
        Box(-np.inf, 0.0, shape=(3,)),
    ]:
        box.seed(0)
        for _ in range(20):
            s = box.sample()
            assert s.dtype == box.dtype and s.shape == box.shape
            assert box.contains(s)


@pytest.mark.parametrize("shape", [(4,), (5, 5)])  # (5, 5): past contains()'s small-Box path
def test_box_dimensions_pinned_at_an_infinity_sample_that_infinity(shape: tuple[int, ...]) -> None:
    # low == high == -inf is "bounded above" (gymnasium's rule): -inf, not a finite normal.
    low = np.resize([0.0, -np.inf, np.inf, -np.inf], shape)
    high = np.resize([1.0, -np.inf, np.inf, np.inf], shape)
    box = Box(low, high, seed=0)
    assert box.is_bounded == (False, False)
    for _ in range(10):
        s = box.sample()
        assert box.contains(s)
        np.testing.assert_array_equal(s[np.isinf(low) & (low == high)], low[low == high])
    assert not Box(-np.inf, -np.inf, shape).contains(np.zeros(shape, np.float32))
    theirs = gymnasium.spaces.Box(low.astype(np.float32), high.astype(np.float32), seed=0)
    box.seed(0)
    for _ in range(5):
        np.testing.assert_array_equal(box.sample(), theirs.sample())


BIG = float(np.finfo(np.float64).max)


@pytest.mark.parametrize(
    ("low", "high"),
    [
        (-BIG, BIG),  # one range for every entry
        (-1e308, 1e308),
        ([-BIG, 0.0, -BIG, -1.0], [BIG, 1.0, 0.0, 1.0]),  # per-entry ranges, some overflowing
        ([-BIG, -np.inf, 0.0, -1.0], [BIG, 1.0, np.inf, np.inf]),  # with unbounded entries
    ],
)
def test_float64_box_whose_range_overflows_samples_uniformly(low: Any, high: Any) -> None:
    box = Box(low, high, shape=(4,), dtype=np.float64, seed=0)
    samples = np.array([box.sample() for _ in range(2000)])
    assert all(box.contains(s) for s in samples)
    low, high = np.broadcast_to(low, 4), np.broadcast_to(high, 4)
    with np.errstate(over="ignore"):
        wide = np.isinf(high - low) & np.isfinite(low) & np.isfinite(high)
    assert wide.any()
    for i in np.flatnonzero(wide):
        # Uniform over [low, high]: each quarter of the range holds about a quarter of them.
        halves = np.linspace(low[i] / 2, high[i] / 2, 5)  # the edges, halved: finite steps
        quarters = np.histogram(samples[:, i] / 2, bins=halves)[0]
        assert all(400 < q < 600 for q in quarters), quarters


def test_box_range_overflow_leaves_the_finite_entries_exact() -> None:
    wide = Box([-BIG, 0.25], [BIG, 0.5], dtype=np.float64, seed=3)
    narrow = Box(0.25, 0.5, shape=(2,), dtype=np.float64, seed=3)
    for _ in range(20):
        assert wide.sample()[1] == narrow.sample()[1]  # the same double, scaled as before


def test_box_integer_sample_reaches_high_endpoint() -> None:
    box = Box(0, 1, shape=(200,), dtype=np.int64, seed=0)
    assert set(box.sample().tolist()) == {0, 1}


def test_box_integer_sample_covers_full_uint8_range_without_overflow() -> None:
    box = Box(0, 255, shape=(5000,), dtype=np.uint8, seed=0)
    s = box.sample()
    assert int(s.max()) == 255 and int(s.min()) == 0


def test_box_sample_mask_zeroes_masked_entries() -> None:
    box = Box(np.array([1.0, -1.0, -1.0]), np.array([2.0, 1.0, 1.0]), seed=0)
    s = box.sample(mask=np.array([0, 1, 0]))
    assert s[0] == 1.0 and s[2] == 0.0
    assert box.contains(s)


def test_box_sample_rejects_mask_of_wrong_shape() -> None:
    with pytest.raises(ValueError, match="broadcastable"):
        Box(0.0, 1.0, shape=(3,)).sample(mask=np.ones(2))


# -- membership ----------------------------------------------------------------------------


def test_box_contains_checks_bounds_and_shape() -> None:
    box = Box(-1.0, 1.0, shape=(2,))
    assert box.contains(np.array([0.5, -0.5], dtype=np.float32))
    assert not box.contains(np.array([1.5, 0.0], dtype=np.float32))
    assert not box.contains(np.array([0.0], dtype=np.float32))
    assert not box.contains(np.zeros((2, 1), dtype=np.float32))


# float32 values are compared as they are, float64 ones as their cast to the Box's float32.
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [2, 17, 64])  # 17 is past the per-element loop of small Boxes
def test_box_contains_rejects_nan(size: int, dtype: Any) -> None:
    x = np.zeros(size, dtype=dtype)
    x[-1] = np.nan
    assert not Box(-1.0, 1.0, shape=(size,)).contains(x)
    assert not Box(-np.inf, np.inf, shape=(size,)).contains(x)
    x[-1] = np.inf
    assert Box(-np.inf, np.inf, shape=(size,)).contains(x)


def test_box_contains_accepts_same_kind_arrays() -> None:
    box = Box(-1.0, 1.0, shape=(2,))
    assert box.contains(np.zeros(2, dtype=np.float64))
    assert box.contains(np.zeros(2, dtype=np.int64))
    assert not box.contains(np.zeros(2, dtype=np.complex64))


def test_integer_box_rejects_int64_array_but_accepts_python_ints() -> None:
    box = Box(0, 255, shape=(2,), dtype=np.uint8)
    assert not box.contains(np.array([1, 2], dtype=np.int64))
    assert box.contains([1, 2])
    assert not box.contains([1, 256])
    assert not box.contains([1.0, 2.0])
    assert box.contains(np.array([1, 2], dtype=np.uint8))


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_integer_box_judges_a_list_of_bools_as_a_bool_array(dtype: Any) -> None:
    # Not exact Python ints, so np.asarray(x) and the same_kind rule: bool -> int is allowed.
    box = Box(0, 1, shape=(2,), dtype=dtype)
    assert box.contains([True, False]) and box.contains(np.array([True, False]))
    assert not Box(0, 0, shape=(2,), dtype=dtype).contains([True, False])
    assert not box.contains([True])


def test_integer_box_rejects_float_arrays() -> None:
    assert not Box(0, 10, shape=(2,), dtype=np.int64).contains(np.array([1.0, 2.0]))


def test_box_contains_python_scalars_and_lists() -> None:
    assert Box(0.0, 1.0, shape=()).contains(0.5)
    assert Box(0.0, 1.0, shape=(2,)).contains([0.5, 0.25])
    assert not Box(0.0, 1.0, shape=(2,)).contains("ab")
    assert not Box(0.0, 1.0, shape=(2,)).contains([[0.5], [1, 2]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("size", [2, 20])  # 20 is past the per-element loop of small Boxes
def test_box_contains_judges_a_masked_array_alike_at_every_size(size: int, dtype: Any) -> None:
    # The per-element loop read masked entries as None: TypeError up to 16 entries, a bool past.
    box = Box(0, 1, shape=(size,), dtype=dtype)
    values = np.zeros(size, dtype)
    masked = np.ma.masked_array(values, mask=[True] + [False] * (size - 1))
    assert box.contains(masked) is True
    values[1] = 2
    assert box.contains(np.ma.masked_array(values, mask=masked.mask)) is False
    # float64 values of a float32 Box: compared as the Box stores them
    wide = np.ma.masked_array(np.zeros(size), mask=masked.mask)
    assert Box(0.0, 1.0, shape=(size,)).contains(wide) is True


@pytest.mark.parametrize("size", [2, 17])  # 17 is past the per-element loop of small Boxes
def test_box_contains_floats_at_a_float32_bound_given_as_float64(size: int) -> None:
    box = Box(0.1, 1.0, shape=(size,))  # float32(0.1) is 0.10000000149...
    values = [0.1] + [0.5] * (size - 1)
    assert box.contains(values)
    assert box.contains(np.array(values))
    assert box.contains(np.array(values, dtype=np.float32))
    assert box.contains(np.array(values, dtype=np.longdouble))
    assert not box.contains([0.099] + [0.5] * (size - 1))
    assert Box(0.1, 1.0, shape=()).contains(0.1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("size", [1, 17])
@pytest.mark.parametrize(
    "bounds",
    [(0.1, 1.0), (-0.0, 0.0), (-np.inf, 0.7), (0.7, np.inf), "finite range", "subnormal"],
)
def test_box_judges_a_float64_array_as_its_cast_to_the_box_dtype(
    dtype: Any, size: int, bounds: Any
) -> None:
    info = np.finfo(dtype)
    if bounds == "finite range":
        bounds = (-float(info.max), float(info.max))
    elif bounds == "subnormal":
        bounds = (float(info.smallest_subnormal), 1.0)
    low, high = bounds
    box = Box(low, high, shape=(size,), dtype=dtype)
    values = [1e300, -1e300, np.nan, np.inf, -np.inf]
    for bound in (box.low[0], box.high[0]):
        if np.isinf(bound):
            continue
        for way in (-np.inf, np.inf):  # both neighbours, and the float64s around halfway
            with np.errstate(over="ignore"):
                beyond = np.nextafter(bound, dtype(way))
            if np.isinf(beyond):
                beyond = 2 * float(bound) - float(np.nextafter(bound, dtype(-way)))
            half = (float(bound) + float(beyond)) / 2
            values += [float(bound), *np.nextafter(half, [-np.inf, np.inf]), half]
    for value in values:
        x = np.full(size, value)
        with np.errstate(over="ignore"):
            as_stored = x.astype(dtype)
        assert box.contains(x) == box.contains(as_stored), value


def test_integer_arrays_in_a_float_box_are_compared_by_value() -> None:
    box = Box(0.0, 2.0**24, shape=(1,))
    assert not box.contains(np.array([2**24 + 1]))  # float32(2**24 + 1) would be the bound


def test_in_operator_is_contains() -> None:
    box = Box(-1.0, 1.0, shape=(2,))
    assert np.zeros(2, dtype=np.float32) in box
    assert np.full(2, 3.0, dtype=np.float32) not in box


# -- repr ----------------------------------------------------------------------------------


def test_box_repr_cartpole_exact() -> None:
    assert repr(cartpole_box()) == (
        "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)"
    )


def test_box_repr_abridges_more_than_eight_entries() -> None:
    batched = sekai.spaces.batch_space(cartpole_box(), 8)
    assert repr(batched) == (
        "Box([-4.8, -inf, -0.41887903, ..., -inf, -0.41887903, -inf], "
        "[4.8, inf, 0.41887903, ..., inf, 0.41887903, inf], (8, 4), float32)"
    )


@pytest.mark.parametrize(
    ("box", "text"),
    [
        (Box(-10.0, 10.0, shape=(1,)), "Box(-10.0, 10.0, (1,), float32)"),
        (Box(-1.0, 1.0, shape=(3,)), "Box(-1.0, 1.0, (3,), float32)"),
        (Box([-1.0, -2.0], [1.0, 2.0]), "Box([-1.0, -2.0], [1.0, 2.0], (2,), float32)"),
        (Box(0, 255, (84, 84, 3), np.uint8), "Box(0, 255, (84, 84, 3), uint8)"),
        (
            Box(
                np.array([-4.8, -np.inf, -0.41887903, -np.inf, 0.0]),
                np.array([4.8, np.inf, 0.41887903, np.inf, 1.0]),
            ),
            "Box([-4.8, -inf, -0.41887903, -inf, 0.0], [4.8, inf, 0.41887903, inf, 1.0], "
            "(5,), float32)",
        ),
        (
            Box(
                np.array([-1.0, -1.0, -1.0, -1.0, -4 * np.pi, -9 * np.pi]),
                np.array([1.0, 1.0, 1.0, 1.0, 4 * np.pi, 9 * np.pi]),
            ),
            "Box([-1.0, -1.0, -1.0, -1.0, -12.566371, -28.274334], "
            "[1.0, 1.0, 1.0, 1.0, 12.566371, 28.274334], (6,), float32)",
        ),
    ],
)
def test_box_repr_matches_documented_forms(box: Box, text: str) -> None:
    assert repr(box) == text


def test_float64_box_with_float32_bounds_prints_float32_repr() -> None:
    box = Box(-CARTPOLE_HIGH.astype(np.float64), CARTPOLE_HIGH.astype(np.float64), dtype=np.float64)
    assert repr(box) == (
        "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float64)"
    )


def test_float64_box_keeps_full_precision_when_not_a_float32_value() -> None:
    assert repr(Box(0.0, 0.1, shape=(1,), dtype=np.float64)) == "Box(0.0, 0.1, (1,), float64)"
    assert repr(Box(0.0, 1 / 3, shape=(1,), dtype=np.float64)) == (
        "Box(0.0, 0.3333333333333333, (1,), float64)"
    )


# -- equality, hashing, pickling -----------------------------------------------------------


def test_box_equality_by_value() -> None:
    assert Box(0.0, 1.0, shape=(2,)) == Box(np.zeros(2), np.ones(2))
    assert Box(0.0, 1.0, shape=(2,)) != Box(0.0, 2.0, shape=(2,))
    assert Box(0.0, 1.0, shape=(2,)) != Box(0.0, 1.0, shape=(2,), dtype=np.float64)
    assert Box(0.0, 1.0, shape=(2,)) != Box(0.0, 1.0, shape=(1, 2))
    assert Box(0.0, 1.0, shape=(2,)) != "Box"


def test_box_is_unhashable() -> None:
    with pytest.raises(TypeError, match="unhashable type: 'Box'"):
        hash(Box(0.0, 1.0, shape=(2,)))


def pickled(x: Any) -> Any:
    return pickle.loads(pickle.dumps(x))


@pytest.mark.parametrize("clone", [pickled, copy.deepcopy])
def test_box_pickle_and_deepcopy_keep_generator_state(clone: Callable[[Any], Any]) -> None:
    box = cartpole_box()
    box.seed(3)
    box.sample()
    other = clone(box)
    assert other == box
    np.testing.assert_array_equal(other.sample(), box.sample())
    assert other.contains(other.sample())
    with pytest.raises(ValueError):
        other.low[0] = 0.0


# -- JSON ----------------------------------------------------------------------------------


def test_box_to_jsonable_form() -> None:
    assert Box([-1.0, -2.0], [1.0, 2.0]).to_jsonable() == {
        "type": "Box",
        "low": [-1.0, -2.0],
        "high": [1.0, 2.0],
        "shape": [2],
        "dtype": "float32",
    }


# -- gymnasium parity (classic-control trajectories depend on identical draws) ---------------


@pytest.mark.parametrize(
    ("low", "high", "dtype"),
    [
        (-CARTPOLE_HIGH, CARTPOLE_HIGH, np.float32),
        (np.float32(-2.0), np.float32(2.0), np.float32),
        (np.array([-1.0, 0.0]), np.array([1.0, 3.0]), np.float64),
        (
            np.array([[-np.inf, 0.0, -3.0], [-1.0, -np.inf, -np.inf]]),
            np.array([[np.inf, np.inf, 5.0], [1.0, 2.0, np.inf]]),
            np.float32,
        ),
        (np.full(3, -np.inf), np.full(3, np.inf), np.float64),
        (np.array(0.0), np.array(np.inf), np.float32),
    ],
)
def test_float_box_sample_draws_exactly_like_gymnasium(low: Any, high: Any, dtype: Any) -> None:
    shape = np.shape(low) if np.ndim(low) else (3,)
    ours = Box(low, high, shape=shape, dtype=dtype)
    theirs = gymnasium.spaces.Box(
        np.broadcast_to(low, shape).astype(dtype),
        np.broadcast_to(high, shape).astype(dtype),
        shape=shape,
        dtype=dtype,
    )
    ours.seed(0)
    theirs.seed(0)
    for _ in range(50):
        a, b = ours.sample(), theirs.sample()
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
