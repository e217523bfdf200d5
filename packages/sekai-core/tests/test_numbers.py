"""How sekai reads the numbers of other array libraries (``sekai._numbers``, ``holds_bool``),
with a stand-in for a JAX or torch array: a dtype NumPy cannot name, read through
``__array__``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai._args import holds_bool
from sekai._numbers import array_kind
from sekai.spaces import Box


class ForeignArray:
    """An array of another library: its dtype is no NumPy dtype (as torch's is not)."""

    def __init__(self, values: Any) -> None:
        self._values = np.asarray(values)
        self.shape = self._values.shape
        self.ndim = self._values.ndim
        self.dtype = f"foreign.{self._values.dtype}"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._values if dtype is None else self._values.astype(dtype)

    def __len__(self) -> int:
        return len(self._values)


@pytest.mark.parametrize("values", [True, [True, False], [[True], [False]]], ids=repr)
def test_a_bool_array_of_another_library_holds_bools_whatever_its_dimensions(values: Any) -> None:
    # Only a 0-d one was read: Box(high=jnp.array([True, True])) became Box(0.0, 1.0, ...)
    assert array_kind(ForeignArray(values)) == "b"
    assert holds_bool(ForeignArray(values))
    assert holds_bool([0.5, ForeignArray(values)])
    with pytest.raises(TypeError, match="not bools"):
        Box(low=0.0, high=ForeignArray(values))


def _object_array(*items: Any) -> np.ndarray:
    """A 1-d object array of ``items`` as they are (NumPy unpacks none of them)."""
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


def test_an_object_array_holds_the_bools_of_its_items() -> None:
    # NumPy reads the object array [True, 0.5] as the floats [1.0, 0.5], silently.
    assert holds_bool(np.array([True, 0.5], dtype=object))
    assert holds_bool(np.array([[1.0, np.True_]], dtype=object))
    assert holds_bool(_object_array(np.array(True, dtype=object), 0.5))  # a nested 0-d item
    assert holds_bool(_object_array(ForeignArray([True]), 0.5))
    assert not holds_bool(np.array([1, 0.5, np.float32(2.0)], dtype=object))


def test_numbers_of_another_library_and_plain_numbers_hold_no_bool() -> None:
    assert array_kind(ForeignArray([1.5, 2.0])) == "f"
    assert array_kind(2.0) is None
    for value in (1.5, 3, np.float64(1.0), ForeignArray([1, 2]), [1.0, 2, np.int64(3)], "s"):
        assert not holds_bool(value)
    assert holds_bool([1.0, np.True_]) and holds_bool((True,))
