"""The moments of a batch, and running statistics' updates kept in float64's range.

Finite samples about 1.3e154 apart (the square root of float64's largest number) already take
a variance to inf, where it would stay for good, and every value normalised with it to 0: an
update is computed in full before anything is stored, and refused where it overflows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from sekai.stats.running import _MomentStats

__all__ = ["Moments", "batch_moments", "in_range", "out_of_range", "pooled"]

# The statistics after an update, to store: mean, variance, and the count of samples behind
# them (RunningMeanStd) or the sum of their decayed weights (ExponentialMovingStats).
Moments = tuple[Any, Any, float]


def batch_moments(
    arr: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """Mean, variance and size of a non-empty batch along axis 0."""
    n = arr.shape[0]
    if n == 1:  # one sample: skip the variance pass (it is zero)
        return arr[0].copy(), np.zeros(arr.shape[1:], dtype=np.float64), 1
    return arr.mean(axis=0), arr.var(axis=0), n


def pooled(
    mean: Any, var: Any, count: float, other_mean: Any, other_var: Any, other: float
) -> Moments:
    """The mean, variance and count of two sets of samples, of these moments and counts
    (NumPy arrays or scalars, or Python floats: the same operations, so the same bits)."""
    total = count + other
    delta = other_mean - mean
    m2 = var * count + other_var * other + delta * delta * (count * other / total)
    return mean + delta * (other / total), m2 / total, float(total)


def in_range(
    stats: _MomentStats, batch: NDArray[np.float64] | None, *moments: Any
) -> Moments | None:
    """``stats`` with ``moments`` (mean, var, count) or a ``batch`` added, not stored; None where
    float64 overflows on the way. NumPy's error state costs less than a look at the results,
    and keeps NumPy from warning."""
    try:
        # under="ignore": a caller's np.seterr(all="raise") must not refuse a tiny sample.
        with np.errstate(over="raise", invalid="raise", under="ignore"):
            if batch is not None:
                moments = batch_moments(batch)
            return stats._moments_with(*moments)
    except FloatingPointError:
        return None


def out_of_range(
    stats: _MomentStats, batch: NDArray[np.float64] | None, *moments: Any
) -> tuple[tuple[int, ...], str]:
    """For ``moments`` or a ``batch`` that ``in_range`` refused: the index of the first entry
    whose mean or variance would not be finite (for a batch, ``(row, *index)`` of the sample
    farthest from the stored mean there), and which of the two it is."""
    with np.errstate(all="ignore"):
        if batch is not None:
            moments = batch_moments(batch)
        new_mean, new_var, _ = stats._moments_with(*moments)
        finite_mean = np.isfinite(new_mean)
        found = np.argwhere(~(finite_mean & np.isfinite(new_var)))
        at = tuple(int(i) for i in found[0]) if len(found) else (0,) * len(stats.shape)
        moment = "variance" if finite_mean[at] else "mean"
        if batch is not None:
            column = np.moveaxis(batch, 0, -1)[at]  # the batch's samples at that index
            at = (int(np.argmax(np.abs(column - stats.mean[at]))), *at)
    return at, moment
