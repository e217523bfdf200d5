"""Sums with a fixed (left-to-right) association, so one env and a batch agree bit for bit.

NumPy's ``sum`` reduces pairwise, and a single env written with Python floats adds left to
right; ``seq_sum`` adds left to right (column by column, or with ``np.cumsum``, an
accumulation, for long rows), so
``seq_sum(x)[k]`` equals ``((x[k, 0] + x[k, 1]) + x[k, 2]) + ...`` exactly, as Python's
``sum()`` of the same floats does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["divide_rows", "seq_sum"]


_COLUMNWISE = 16  # up to this many terms, adding columns beats np.cumsum on short rows


def seq_sum(x: Any) -> Any:
    """Left-to-right sum over the last axis (0.0 for an empty axis)."""
    array = np.asarray(x, dtype=np.float64)
    width = array.shape[-1]
    if width == 0:
        return np.zeros(array.shape[:-1])
    if width == 1:
        return array[..., 0].copy()
    if width > _COLUMNWISE:
        return np.cumsum(array, axis=-1)[..., -1]
    total = array[..., 0] + array[..., 1]
    for column in range(2, width):
        total += array[..., column]
    return total


def divide_rows(x: np.ndarray, totals: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``x / totals[..., None]``, bit for bit, for ``x`` of shape ``(..., k)`` with short rows.

    Broadcasting a total along a short row makes NumPy run one inner loop per row; repeating
    the totals first gives one loop over the whole array.
    """
    divisor = totals if x.ndim < 2 else np.repeat(totals, x.shape[-1]).reshape(x.shape)
    result: np.ndarray = np.divide(x, divisor, out=out)
    return result
