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


def _window_sums(a: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, sum and sum of squares of the valid values in each trailing window."""
    valid = ~np.isnan(a)
    values = np.where(valid, a, 0.0)
    pad = np.zeros((1, *a.shape[1:]))

    def trailing(v: np.ndarray) -> np.ndarray:
        c = np.concatenate([pad, np.cumsum(v, axis=0)])
        lo = np.maximum(np.arange(a.shape[0]) + 1 - window, 0)
        return c[np.arange(a.shape[0]) + 1] - c[lo]  # type: ignore[no-any-return]

    return trailing(valid.astype(np.float64)), trailing(values), trailing(values * values)


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
    count, total, _ = _window_sums(a, window)
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
    mean = rolling_mean(a, window, min_periods=1)
    out = np.full(a.shape, np.nan)
    need = max(_min_periods(min_periods, window), ddof + 1)
    for t in range(a.shape[0]):
        block = a[max(0, t + 1 - window) : t + 1]
        valid = ~np.isnan(block)
        count = valid.sum(axis=0)
        dev = np.where(valid, block - mean[t], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = (dev * dev).sum(axis=0) / (count - ddof)
        out[t] = np.where(count >= need, np.sqrt(var), np.nan)
    return out


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
    std = rolling_std(returns, window)
    if periods_per_year is None:
        return std
    ppy = check_number("periods_per_year", periods_per_year, "gt0")
    return std * np.sqrt(ppy)  # type: ignore[no-any-return]
