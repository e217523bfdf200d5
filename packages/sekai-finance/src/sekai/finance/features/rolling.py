"""Causal rolling and exponentially weighted statistics along the time axis."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance._values import check_number
from sekai.finance.features.transforms import as_array, window_arg

__all__ = [
    "ewm_mean",
    "ewm_std",
    "realized_volatility",
    "rolling_mean",
    "rolling_std",
    "rolling_zscore",
]


def _window_sums(a: np.ndarray, window: int, center: np.ndarray | None = None) -> np.ndarray:
    """Count and sum of the valid values in each trailing window: ``(2, *a.shape)``.

    With ``center``, the sum is of squared deviations from ``center``'s row instead. Each window
    is summed on its own (one pass per lag, not differences of a running cumsum), so an inf or a
    large offset in one window leaves the others exact.
    """
    out = np.zeros((2, *a.shape))
    count, total = out
    with np.errstate(invalid="ignore"):  # inf - inf: a window holding both is NaN
        for lag in range(min(window, a.shape[0])):
            block = a[: a.shape[0] - lag]
            valid = ~np.isnan(block)
            if center is not None:
                block = block - center[lag:]
                block = block * block
            count[lag:] += valid
            total[lag:] += np.where(valid, block, 0.0)
    return out


def _min_periods(min_periods: int | None, window: int) -> int:
    """``min_periods`` (default: the whole window), at most ``window``: more could never be
    met, and every value would be NaN."""
    if min_periods is None:
        return window
    need = window_arg("min_periods", min_periods)
    if need > window:
        raise ValueError(
            f"min_periods must be <= window ({window}): a window never holds {need} values."
        )
    return need


def rolling_mean(x: Any, window: int, *, min_periods: int | None = None) -> np.ndarray:
    """Mean of the valid values among the last ``window`` rows (NaN below ``min_periods``)."""
    a = as_array(x)
    window = window_arg("window", window)
    count, total = _window_sums(a, window)
    enough = count >= _min_periods(min_periods, window)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(enough, total / count, np.nan)


def rolling_std(
    x: Any, window: int, *, min_periods: int | None = None, ddof: int = 1
) -> np.ndarray:
    """Standard deviation of the valid values among the last ``window`` rows."""
    a = as_array(x)
    window = window_arg("window", window)
    ddof = window_arg("ddof", ddof, minimum=0)
    # Two passes (mean, then squared deviations) avoid the cancellation of sum-of-squares.
    count, squares = _window_sums(a, window, center=rolling_mean(a, window, min_periods=1))
    need = max(_min_periods(min_periods, window), ddof + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count >= need, np.sqrt(squares / (count - ddof)), np.nan)


def rolling_zscore(x: Any, window: int, *, min_periods: int | None = None) -> np.ndarray:
    """``(x − rolling_mean) / rolling_std`` over the trailing window (NaN where std is 0)."""
    a = as_array(x)
    mean = rolling_mean(a, window, min_periods=min_periods)
    std = rolling_std(a, window, min_periods=min_periods)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(std > 0, (a - mean) / std, np.nan)


def _decay(halflife: float) -> float:
    return float(np.exp(np.log(0.5) / check_number("halflife", halflife, "gt0")))


def _ewm(a: np.ndarray, halflife: float) -> tuple[np.ndarray, ...]:
    keep = _decay(halflife)
    shape = a.shape[1:]
    num, num2, den, den2, count = (np.zeros(shape) for _ in range(5))
    out = [np.empty(a.shape) for _ in range(5)]
    for t, row in enumerate(a):
        valid = ~np.isnan(row)
        x = np.where(valid, row, 0.0)
        num = keep * num + x
        num2 = keep * num2 + x * x
        den = keep * den + valid
        den2 = keep * keep * den2 + valid
        count = count + valid
        for store, value in zip(out, (num, num2, den, den2, count)):
            store[t] = value
    return tuple(out)


def ewm_mean(x: Any, halflife: float, *, min_periods: int = 1) -> np.ndarray:
    """Exponentially weighted mean (weights halve every ``halflife`` rows; NaN skipped)."""
    a = as_array(x)
    num, _, den, _, count = _ewm(a, halflife)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = num / den
    return np.where(count >= window_arg("min_periods", min_periods), mean, np.nan)


def ewm_std(x: Any, halflife: float, *, min_periods: int = 2) -> np.ndarray:
    """Exponentially weighted standard deviation, bias-corrected for the weights."""
    a = as_array(x)
    num, num2, den, den2, count = _ewm(a, halflife)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = num / den
        biased = np.maximum(num2 / den - mean * mean, 0.0)
        var = biased * den * den / (den * den - den2)
    need = max(window_arg("min_periods", min_periods), 2)
    return np.where(count >= need, np.sqrt(var), np.nan)


def realized_volatility(
    returns: Any, window: int, *, periods_per_year: float | None = None
) -> np.ndarray:
    """Rolling std of returns, annualised by ``sqrt(periods_per_year)`` when given."""
    std = rolling_std(as_array(returns, "returns"), window)
    if periods_per_year is None:
        return std
    ppy = check_number("periods_per_year", periods_per_year, "gt0")
    return std * np.sqrt(ppy)  # type: ignore[no-any-return]
