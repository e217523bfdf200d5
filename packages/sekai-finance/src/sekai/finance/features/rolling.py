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


def _block_sums(q: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Trailing-window sums of ``q`` split at the window's block boundary.

    Rows are cut into blocks of ``window`` rows, so a window covers the tail of block ``b - 1``
    and the head of block ``b``. Returns ``(head, tail)``, each ``q.shape``: the sums over the
    head and over the tail. Prefix sums restart in every block, so no sum runs over more than
    one window of rows: the rounding of a running cumsum over the whole history (and an inf in
    it) never reaches a later window.
    """
    n = q.shape[0]
    blocks = -(-n // window)
    padded = np.zeros((blocks * window, *q.shape[1:]))
    padded[:n] = q
    prefix = np.cumsum(padded.reshape(blocks, window, *q.shape[1:]), axis=1)
    tail = np.zeros_like(prefix)
    tail[1:] = prefix[:-1, -1:] - prefix[:-1]  # rows after position p in the previous block
    shape = (blocks * window, *q.shape[1:])
    return prefix.reshape(shape)[:n], tail.reshape(shape)[:n]


def _window_total(flags: np.ndarray, window: int) -> np.ndarray:
    """How many of ``flags`` are set in each trailing window."""
    head, tail = _block_sums(flags.astype(np.float64), window)
    total: np.ndarray = head + tail
    return total


def _window_moments(a: np.ndarray, window: int) -> tuple[np.ndarray, ...]:
    """Per trailing window: ``(count, mean, squares)``.

    ``count`` counts the valid (non-NaN) values, ``mean`` is their mean (+-inf when the window
    holds infinities of one sign, NaN for both) and ``squares`` the sum of the squared
    deviations from it (NaN when the window holds an inf). Each part of a window is centred
    on a value of its own block and moved to the window's block exactly, so no sum of squares
    cancels against a large mean; a window where it still would (a level that jumps by orders
    of magnitude inside a block) is computed on its own.
    """
    n = a.shape[0]
    window = max(1, min(window, n))
    valid, finite = ~np.isnan(a), np.isfinite(a)
    rows = np.arange(n)
    blocks = -(-n // window)
    # Each block's anchor: its first finite value, or the last block's anchor when it has
    # none. Rows before that value use the previous block's anchor: a value from later in the
    # block would make earlier rows depend on the future.
    padded = np.zeros((blocks * window, *a.shape[1:]), dtype=bool)
    padded[:n] = finite
    in_block = padded.reshape(blocks, window, *a.shape[1:])
    has: np.ndarray = np.asarray(in_block.any(axis=1))
    first_at = np.argmax(in_block, axis=1)  # position in the block of its first finite value
    first = np.take_along_axis(
        a, np.minimum(first_at + window * _column(np.arange(blocks), a.ndim), n - 1), axis=0
    )
    where = np.where(has, _column(np.arange(blocks), a.ndim), -1)
    where = np.maximum.accumulate(where, axis=0)
    picked = np.take_along_axis(first, np.maximum(where, 0), axis=0)
    anchor = np.where(where >= 0, picked, 0.0)
    previous = np.zeros((n, *a.shape[1:]))
    later = rows >= window
    previous[later] = anchor[rows[later] // window - 1]
    block = rows // window
    seen = has[block] & (_column(rows % window, a.ndim) >= first_at[block])
    own = np.where(seen, anchor[block], previous)  # each row's anchor
    d = np.where(finite, a - anchor[block], 0.0)  # the block's values, on its anchor
    k_head, k_tail = _block_sums(finite.astype(np.float64), window)
    s_head, s_tail = _block_sums(d, window)
    q_head, q_tail = _block_sums(d * d, window)
    count = _window_total(valid, window)
    up = _window_total(a == np.inf, window)
    down = _window_total(a == -np.inf, window)
    # The tail was centred on the previous block's anchor: move it to this row's anchor.
    shift = previous - own
    k = k_head + k_tail
    s1 = s_head + s_tail + k_tail * shift
    s2 = q_head + q_tail + 2 * shift * s_tail + k_tail * shift * shift
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_dev = s1 / k
        mean = own + mean_dev
        squares = np.maximum(s2 - s1 * mean_dev, 0.0)
        size = q_head + q_tail + k_tail * shift * shift + np.abs(2 * shift * s_tail)
    # Where the terms were a million times the result, rounding may have eaten its digits
    # (not where they are all 0: a flat window on its own anchor has nothing to cancel).
    redo = (k >= 2) & (up + down == 0) & (size > 0) & (squares <= 1e-6 * size)
    if redo.any():
        _exact_moments(a, window, redo, mean, squares)
    mean = np.where(up > 0, np.where(down > 0, np.nan, np.inf), np.where(down > 0, -np.inf, mean))
    squares = np.where(up + down > 0, np.nan, squares)
    return count, mean, squares


def _column(values: np.ndarray, ndim: int) -> np.ndarray:
    """``values`` shaped to broadcast along the time axis of an ``ndim``-d array."""
    return values.reshape(-1, *([1] * (ndim - 1)))


def _exact_moments(
    a: np.ndarray, window: int, redo: np.ndarray, mean: np.ndarray, squares: np.ndarray
) -> None:
    """Write the mean and squared deviations of the windows ``redo`` holds, each computed
    from its own values in two passes (in chunks, so memory stays bounded)."""
    padded = np.concatenate([np.full((window - 1, *a.shape[1:]), np.nan), a])
    windows = np.lib.stride_tricks.sliding_window_view(padded, window, axis=0)
    where = np.nonzero(redo)
    chunk = max(1, _CHUNK_VALUES // window)
    for start in range(0, where[0].size, chunk):
        index = tuple(axis[start : start + chunk] for axis in where)
        values = windows[index]  # (m, window): the values of each window to redo
        with np.errstate(invalid="ignore"):
            centre = np.nanmean(values, axis=-1)
            mean[index] = centre
            squares[index] = np.nansum(np.square(values - centre[:, None]), axis=-1)


_CHUNK_VALUES = 1 << 22  # values copied at once (chunks of windows): 32 MiB of float64


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


def _mean_std(
    a: np.ndarray, window: int, min_periods: int | None, ddof: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rolling mean and standard deviation of ``a`` from one pass of ``_window_moments``."""
    count, mean, squares = _window_moments(a, window)
    need = _min_periods(min_periods, window)
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(squares / (count - ddof))
    return (
        np.where(count >= need, mean, np.nan),
        np.where(count >= max(need, ddof + 1), std, np.nan),
    )


def rolling_mean(x: Any, window: int, *, min_periods: int | None = None) -> np.ndarray:
    """Mean of the valid values among the last ``window`` rows (NaN below ``min_periods``)."""
    return _mean_std(as_array(x), window_arg("window", window), min_periods, 1)[0]


def rolling_std(
    x: Any, window: int, *, min_periods: int | None = None, ddof: int = 1
) -> np.ndarray:
    """Standard deviation of the valid values among the last ``window`` rows."""
    a, window = as_array(x), window_arg("window", window)
    return _mean_std(a, window, min_periods, window_arg("ddof", ddof, minimum=0))[1]


def rolling_zscore(x: Any, window: int, *, min_periods: int | None = None) -> np.ndarray:
    """``(x − rolling_mean) / rolling_std`` over the trailing window (NaN where std is 0)."""
    a = as_array(x)
    mean, std = _mean_std(a, window_arg("window", window), min_periods, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(std > 0, (a - mean) / std, np.nan)


def _decay(halflife: float) -> float:
    return float(np.exp(np.log(0.5) / check_number("halflife", halflife, "gt0")))


def _ewm(a: np.ndarray, halflife: float) -> tuple[np.ndarray, ...]:
    """Per row: the weighted mean and the weighted sum of squared deviations from it (of the
    finite values), the sums of the weights and of their squares, the count of valid values,
    and the weights of +inf and of -inf values.

    The mean and the squared deviations are updated incrementally (West's algorithm, weights
    decayed every row): ``sum(w·x²)/sum(w) − mean²`` would cancel to nothing for a series far
    from zero (a price of 50,000 moving by cents).
    """
    keep = _decay(halflife)
    shape = a.shape[1:]
    mean, squares, den, den2, count, up, down = (np.zeros(shape) for _ in range(7))
    weight = np.zeros(shape)  # of the finite values
    out = [np.empty(a.shape) for _ in range(7)]
    infinite = bool(np.isinf(a).any())  # the bookkeeping of infinities only when there are
    for t, row in enumerate(a):
        valid = ~np.isnan(row)
        den = keep * den + valid
        den2 = keep * keep * den2 + valid
        count = count + valid
        if infinite:
            finite = np.isfinite(row)
            up = keep * up + (row == np.inf)
            down = keep * down + (row == -np.inf)
            weight = keep * weight + finite
        else:
            finite, weight = valid, den
        x = np.where(finite, row, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = np.where(finite, x - mean, 0.0)
            mean = mean + np.where(finite, delta / weight, 0.0)
            squares = keep * squares + np.where(finite, delta * (x - mean), 0.0)
        for store, value in zip(out, (mean, squares, den, den2, count, up, down)):
            store[t] = value
    return tuple(out)


def _with_infinities(mean: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """``mean``, or ±inf while an infinity of one sign has weight (NaN for both)."""
    return np.where(up > 0, np.where(down > 0, np.nan, np.inf), np.where(down > 0, -np.inf, mean))


def ewm_mean(x: Any, halflife: float, *, min_periods: int = 1) -> np.ndarray:
    """Exponentially weighted mean (weights halve every ``halflife`` rows; NaN skipped)."""
    a = as_array(x)
    mean, _, den, _, count, up, down = _ewm(a, halflife)
    mean = np.where(den > 0, _with_infinities(mean, up, down), np.nan)
    return np.where(count >= window_arg("min_periods", min_periods), mean, np.nan)


def ewm_std(x: Any, halflife: float, *, min_periods: int = 2) -> np.ndarray:
    """Exponentially weighted standard deviation, bias-corrected for the weights (NaN while
    an infinity has weight)."""
    a = as_array(x)
    _, squares, den, den2, count, up, down = _ewm(a, halflife)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = squares / den * den * den / (den * den - den2)
    var = np.where(up + down > 0, np.nan, var)
    need = max(window_arg("min_periods", min_periods), 2)
    return np.where(count >= need, np.sqrt(np.maximum(var, 0.0)), np.nan)


def realized_volatility(
    returns: Any, window: int, *, periods_per_year: float | None = None
) -> np.ndarray:
    """Rolling std of returns, annualised by ``sqrt(periods_per_year)`` when given."""
    std = rolling_std(as_array(returns, "returns"), window)
    if periods_per_year is None:
        return std
    ppy = check_number("periods_per_year", periods_per_year, "gt0")
    return std * np.sqrt(ppy)  # type: ignore[no-any-return]
