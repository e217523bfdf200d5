"""Causal element-wise transforms: returns, momentum, lags, fills and cross-sections."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance._values import check_count, real_array

__all__ = [
    "cross_sectional_rank",
    "cross_sectional_zscore",
    "forward_fill",
    "lag",
    "log_returns",
    "momentum",
    "simple_returns",
]


def as_array(x: Any, name: str = "x") -> np.ndarray:
    """A ``(T,)`` or ``(T, N)`` float64 copy; ``TypeError`` for what is not real numbers
    (bools, strings), ``ValueError`` for other shapes."""
    a = real_array(name, x)
    if a.ndim not in (1, 2):
        raise ValueError(f"{name} must be a (T,) or (T, N) array, got shape {a.shape}.")
    return a


def window_arg(name: str, value: object, minimum: int = 1) -> int:
    """Validate an integer window-like argument."""
    return check_count(name, value, minimum)


def _shifted(a: np.ndarray, periods: int) -> np.ndarray:
    out = np.full_like(a, np.nan)
    if periods < a.shape[0]:
        out[periods:] = a[: a.shape[0] - periods]
    return out


def log_returns(prices: Any) -> np.ndarray:
    """``log(p_t / p_{t−1})``; NaN in row 0 and where a price is missing."""
    p = as_array(prices, "prices")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(p / _shifted(p, 1))  # type: ignore[no-any-return]


def simple_returns(prices: Any) -> np.ndarray:
    """``p_t / p_{t−1} − 1``; NaN in row 0 and where a price is missing."""
    p = as_array(prices, "prices")
    with np.errstate(divide="ignore", invalid="ignore"):
        return p / _shifted(p, 1) - 1.0  # type: ignore[no-any-return]


def momentum(prices: Any, window: int) -> np.ndarray:
    """``p_t / p_{t−window} − 1``: the simple return over the last ``window`` rows."""
    p = as_array(prices, "prices")
    with np.errstate(divide="ignore", invalid="ignore"):
        return p / _shifted(p, window_arg("window", window)) - 1.0  # type: ignore[no-any-return]


def lag(x: Any, periods: int = 1) -> np.ndarray:
    """Shift down by ``periods`` rows (>= 0), NaN-filled at the top."""
    return _shifted(as_array(x), window_arg("periods", periods, minimum=0))


def forward_fill(x: Any, *, limit: int | None = None) -> np.ndarray:
    """Fill NaN with the last valid value above it (at most ``limit`` rows in a row)."""
    a = as_array(x)
    if limit is not None:
        limit = window_arg("limit", limit)
    flat = a.reshape(a.shape[0], -1)
    rows = np.arange(flat.shape[0])[:, None]
    valid = ~np.isnan(flat)
    last = np.maximum.accumulate(np.where(valid, rows, -1), axis=0)
    filled = np.where(last >= 0, flat[np.maximum(last, 0), np.arange(flat.shape[1])], np.nan)
    if limit is not None:
        filled = np.where(valid | (rows - last <= limit), filled, np.nan)
    return filled.reshape(a.shape)


def cross_sectional_zscore(x: Any) -> np.ndarray:
    """Per row: ``(x − mean) / std`` over the valid entries (population std; 0 if it is 0)."""
    a = as_array(x)
    if a.ndim == 1:  # (T,): one asset, so every row is a cross-section of one
        a = a[:, None]
    valid = ~np.isnan(a)
    count = valid.sum(axis=1, keepdims=True)
    safe = np.maximum(count, 1)
    mean = np.where(valid, a, 0.0).sum(axis=1, keepdims=True) / safe
    var = (np.where(valid, a - mean, 0.0) ** 2).sum(axis=1, keepdims=True) / safe
    std = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, (a - mean) / std, 0.0)
    out = np.where(valid, z, np.nan)
    return out.reshape(np.shape(x)) if np.ndim(x) == 1 else out


def cross_sectional_rank(x: Any) -> np.ndarray:
    """Per row: ranks scaled to [0, 1]; ties share the mean rank; a lone entry gives 0.5."""
    a = as_array(x)
    a2 = a[:, None] if a.ndim == 1 else a  # (T,): one asset, a cross-section of one per row
    out = np.full(a2.shape, np.nan)
    for i, row in enumerate(a2):
        valid = np.flatnonzero(~np.isnan(row))
        if valid.size == 1:
            out[i, valid] = 0.5
        elif valid.size > 1:
            values = row[valid]
            order = np.argsort(values, kind="stable")
            ranks = np.empty(values.size)
            ranks[order] = np.arange(values.size, dtype=np.float64)
            for value in np.unique(values):  # ties share their mean rank
                same = values == value
                ranks[same] = ranks[same].mean()
            out[i, valid] = ranks / (values.size - 1)
    return out.reshape(a.shape)
