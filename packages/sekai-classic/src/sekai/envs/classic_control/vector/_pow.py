"""``pow2``: element-wise squares that round exactly as a scalar's ``x ** 2`` does.

The single envs square scalars, as gymnasium does: a NumPy or Python float's ``x ** 2`` calls
C ``pow`` (``powf`` for float32), which rounds differently from a plain product for about one
input in a thousand. An array's ``np.power`` need not call C ``pow`` at all: where NumPy was
built with SVML and the CPU has AVX-512, it runs SIMD kernels that differ from ``pow`` in the
last bit for a few percent of inputs. So the native envs square with

* float64: ``np.float_power``, whose loop always calls C ``pow``;
* float32: ``np.power`` when it agrees with ``powf`` on this machine (checked once, on a fixed
  sample), else one scalar square per element.
"""

from __future__ import annotations

from functools import cache
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["pow2"]

_SAMPLE = 4096  # inputs the float32 check compares; SVML differs on several percent of them


@cache
def _power_is_powf() -> bool:
    """Whether ``np.power`` on float32 arrays gives C ``powf``'s squares on this machine."""
    sample = np.random.default_rng(0).uniform(-8.0, 8.0, _SAMPLE).astype(np.float32)
    return bool(np.array_equal(_power(sample), _scalar_squares(sample)))


def _power(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    # A full-size exponent array: a scalar 2 makes NumPy take its plain-square shortcut.
    squares: npt.NDArray[Any] = np.power(values, np.full(values.shape, 2, dtype=values.dtype))
    return squares


def _scalar_squares(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    flat = values.reshape(-1)
    # pow(scalar, 2 of the same dtype): what ``scalar ** 2`` runs, without a generator frame.
    two = values.dtype.type(2)
    squares = np.fromiter(map(pow, flat, repeat(two)), dtype=values.dtype, count=flat.size)
    return squares.reshape(values.shape)


def pow2(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``values ** 2`` element by element, bit for bit what each element's scalar ``** 2``
    gives (C ``pow``; ``powf`` for float32), on every CPU."""
    if values.dtype == np.float64:
        squares: npt.NDArray[Any] = np.float_power(values, 2.0)
        return squares
    if values.dtype == np.float32 and not _power_is_powf():
        return _scalar_squares(values)
    return _power(values)
