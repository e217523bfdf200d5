"""structurally_equal: nested observations compared element-wise, NaN equal to NaN."""

from __future__ import annotations

import numpy as np

from sekai.utils._equal import structurally_equal


def test_float_arrays_are_equal_with_nan_in_the_same_places() -> None:
    a = np.array([1.0, np.nan], dtype=np.float32)
    assert structurally_equal(a, a.copy())
    assert not structurally_equal(a, np.array([1.0, 2.0], dtype=np.float32))


def test_arrays_of_different_shapes_are_not_equal_even_where_they_broadcast() -> None:
    assert not structurally_equal(np.zeros(3), np.zeros((1, 3)))
    assert not structurally_equal(np.ones(1), np.ones(2))


def test_mappings_need_the_same_keys() -> None:
    a = {"x": np.zeros(2)}
    assert structurally_equal(a, {"x": np.zeros(2)})
    assert not structurally_equal(a, {"x": np.zeros(2), "y": 1})
    assert not structurally_equal({"x": np.zeros(2), "y": 1}, a)


def test_nested_values_with_nan_floats_are_equal() -> None:
    a = {"obs": (np.array([np.nan]), [float("nan"), np.float32("nan")])}
    b = {"obs": (np.array([np.nan]), [float("nan"), np.float32("nan")])}
    assert structurally_equal(a, b)
    assert not structurally_equal(a, {"obs": (np.array([np.nan]), [float("nan"), 1.0])})


def test_object_arrays_of_different_shapes_are_not_equal() -> None:
    short = np.empty(1, dtype=object)
    short[0] = "a"
    long = np.empty(2, dtype=object)
    long[:] = ["a", "b"]
    assert not structurally_equal(short, long)
    assert not structurally_equal(long.reshape(1, 2), long)
