"""``np.clip``'s results without its Python wrapper, for the paths that clip on every call.

First-party plugins import this module (they pin sekai-core to the same minor version).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["clip"]

_maximum, _minimum, _ndarray = np.maximum, np.minimum, np.ndarray
_PYTHON_NUMBERS = (float, int)
# Half, single and double precision: for long doubles, maximum and minimum pick between zeros of
# opposite signs differently from np.clip's loop.
_FAST_CHARS = "efd"
_FAST_SCALARS = (np.float16, np.float32, np.float64)


def clip(x: Any, low: Any, high: Any) -> Any:
    """``np.clip(x, low, high)``: the same value of the same type, NaNs and signed zeros
    included, without the 2-3 us of ``np.clip``'s Python wrapper in the two common cases.

    - A half, single or double array between bound arrays of its dtype and shape:
      ``maximum`` then ``minimum``, which is what ``np.clip`` computes for them.
    - A NumPy half, single or double scalar between Python numbers (the classic envs' steps):
      the bounds are cast to the scalar's type, as NumPy casts Python numbers, and compared.

    Anything else goes through ``np.clip`` itself: with scalar bounds, other dtypes or a 0-d
    array, NumPy's loops pick differently between zeros of opposite signs.
    """
    if type(x) is _ndarray:
        dtype = x.dtype
        if (
            type(low) is _ndarray
            and type(high) is _ndarray
            and low.dtype is dtype  # NumPy's dtypes of its own types are singletons
            and high.dtype is dtype
            and dtype.char in _FAST_CHARS
            and x.ndim
            and x.shape == low.shape == high.shape
        ):
            return _minimum(_maximum(x, low), high)
    elif (
        type(x) in _FAST_SCALARS and type(low) in _PYTHON_NUMBERS and type(high) in _PYTHON_NUMBERS
    ):
        cast = type(x)
        lo, hi = cast(low), cast(high)
        if lo <= hi:  # not NaN, not crossed
            # np.clip is minimum(maximum(x, lo), hi), which keeps x when equal
            if x < lo:
                return lo
            if x > hi:
                return hi
            return x
    return np.clip(x, low, high)
