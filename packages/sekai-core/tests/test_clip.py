"""sekai._clip.clip: np.clip's result, value, type, NaN and zero sign alike."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai._clip import clip

SCALARS: list[Any] = [
    np.float32(1.5),
    np.float32(-3.0),
    np.float32(9.0),
    np.float32(-0.0),
    np.float32(np.nan),
    np.float32(np.inf),
    np.float64(-8.5),
    np.float64(2.0),
    np.float64(-np.inf),
    np.float64(0.0),
    np.float16(5.0),
    np.longdouble(-0.0),
    np.longdouble(7.0),
    np.int64(3),
    np.int8(-5),
    2.5,
    np.array(-0.0),
    np.array(3.0, np.float32),
]
BOUNDS: list[tuple[Any, Any]] = [
    (-2.0, 2.0),
    (-8, 8),
    (0.1, 0.1),
    (0.0, 1.0),
    (-0.0, 0.0),
    (-1.0, -0.0),
    (2.0, -2.0),  # crossed
    (-2.0, np.nan),
    (np.float64(-1.0), np.float64(1.0)),
    (np.float32(-1.0), 1.0),
    (-1e-45, 1e-45),
    (np.array(-0.0), np.array(0.0)),
]


def _assert_same(got: Any, expected: Any) -> None:
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("x", SCALARS)
def test_a_scalar_clips_as_np_clip(x: Any, bounds: tuple[Any, Any]) -> None:
    _assert_same(clip(x, *bounds), np.clip(x, *bounds))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 33, 100])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble, np.int64])
def test_an_array_clips_as_np_clip(size: int, dtype: Any) -> None:
    rng = np.random.default_rng(size)
    specials = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf])
    zeros_and_ones = np.array([0.0, -0.0, -1.0, 1.0, -np.inf, np.inf])
    for _ in range(50):
        low = rng.choice(zeros_and_ones, size)
        high = np.maximum(low, rng.choice(zeros_and_ones, size))
        x = rng.choice(specials, size)
        if dtype is np.int64:
            x = rng.integers(-3, 3, size)
            low, high = np.floor(np.clip(low, -2, 0)), np.ceil(np.clip(high, 0, 2))
        for shape in ((size,), (1, size)):
            args = (x.astype(dtype).reshape(shape), low.reshape(shape), high.reshape(shape))
            _assert_same(clip(*args), np.clip(*args))
            same_dtype = (
                args[0],
                low.astype(dtype).reshape(shape),
                high.astype(dtype).reshape(shape),
            )
            _assert_same(clip(*same_dtype), np.clip(*same_dtype))
            scalar_bounds = (args[0], float(low[0]), float(high[0]))
            _assert_same(clip(*scalar_bounds), np.clip(*scalar_bounds))
