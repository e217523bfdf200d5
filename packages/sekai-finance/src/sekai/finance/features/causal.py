"""As-of joins without look-ahead, and check_causal, a look-ahead detector for transforms."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai._seeding import check_seed
from sekai.error import LookAheadError
from sekai.finance._values import check_count, check_number, is_int, is_real, real_float, too_large
from sekai.finance.timestamps import holds_timezone, timezone_refused

__all__ = ["asof_join", "check_causal"]


def _times(name: str, value: Any) -> np.ndarray:
    t = np.asarray(value)
    if t.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {t.shape}.")
    if t.dtype.kind not in "Mmiuf":
        # NumPy would convert an aware datetime to UTC (a naive local axis would see it early)
        # and drop a string's UTC offset, warning only
        if holds_timezone(t):
            raise timezone_refused(name)
        t = np.asarray(t, dtype="datetime64[ns]")
    missing = (
        np.isnat(t) if t.dtype.kind in "Mm" else (np.isnan(t) if t.dtype.kind == "f" else None)
    )
    if missing is not None and missing.any():
        raise ValueError(
            f"{name} must not hold missing times (NaT or NaN), at position "
            f"{int(np.flatnonzero(missing)[0])}."
        )
    if t.size > 1 and not np.all(t[1:] >= t[:-1]):
        raise ValueError(f"{name} must be sorted.")
    return t


def asof_join(target_times: Any, event_times: Any, values: Any, *, lag: Any = None) -> np.ndarray:
    """Value of the last event with ``event_time + lag <= t`` for every target time ``t``.

    NaN before any event. Both time arrays are datetime64 or both numeric (timezone-aware
    times are refused, naming the array); ``lag`` is a non-negative timedelta (datetime
    axes) or number.
    """
    targets = _times("target_times", target_times)
    events = _times("event_times", event_times)
    if (targets.dtype.kind == "M") != (events.dtype.kind == "M"):
        raise TypeError("target_times and event_times must both be datetimes or both numbers.")
    data = np.asarray(values, dtype=np.float64)
    if data.shape[:1] != events.shape:
        raise ValueError(
            f"values has {data.shape[:1]} rows, expected one per event time {events.shape}."
        )
    if lag is not None:
        if events.dtype.kind == "M":
            # a pandas Timedelta as NumPy's; errors quote the lag as given
            span = lag.to_timedelta64() if hasattr(lag, "to_timedelta64") else lag
            if not isinstance(span, (np.timedelta64, _dt.timedelta)):
                raise TypeError(
                    "lag must be a timedelta (np.timedelta64, datetime.timedelta or pandas "
                    f"Timedelta) on datetime axes, got {type(lag).__name__} {lag!r}."
                )
            delta = np.timedelta64(span)
            # its count of units: NumPy 2.5 deprecates the unitless np.timedelta64(0)
            if np.isnat(delta) or int(delta.astype(np.int64)) < 0:
                raise ValueError(f"lag must be non-negative, got {lag!r}.")
            events = events + delta
        else:
            number = real_float(lag)  # None for np.timedelta64 (an integer type to NumPy)
            if isinstance(lag, _dt.timedelta) or number is None or not 0 <= number < np.inf:
                huge = number is None and is_real(lag)  # shown without its 401 digits
                raise ValueError(
                    "lag must be a finite non-negative number on numeric axes, got "
                    f"{too_large(lag) if huge else repr(lag)}."
                )
            events = events + (lag if is_int(lag) else number)  # an int stays exact
    index = np.searchsorted(events, targets, side="right") - 1
    out = np.full((targets.size, *data.shape[1:]), np.nan)
    found = index >= 0
    out[found] = data[index[found]]
    return out


def _perturbations(x: np.ndarray, cut: int, rng: np.random.Generator) -> list[np.ndarray]:
    tail = slice(cut + 1, None)
    n = x.shape[0] - cut - 1
    rescaled = x.copy()
    rescaled[tail] = rescaled[tail] * rng.uniform(0.5, 2.0)
    reordered = x.copy()
    reordered[tail] = x[tail][rng.permutation(n)]
    signs = x.copy()
    flip = rng.random(signs[tail].shape) < 0.5
    signs[tail] = np.where(flip, -signs[tail], signs[tail])
    signs[tail] = np.where(rng.random(signs[tail].shape) < 0.2, 0.0, signs[tail])
    holes = x.copy()
    nan_now = np.isnan(holes[tail])
    refill = np.where(nan_now, rng.standard_normal(nan_now.shape), holes[tail])
    holes[tail] = np.where(rng.random(nan_now.shape) < 0.3, np.nan, refill)
    return [rescaled, reordered, signs, holes]


def check_causal(
    fn: Callable[[np.ndarray], Any],
    x: Any,
    *,
    n_checks: int = 5,
    rng: np.random.Generator | int | None = None,
    rtol: float = 0.0,
    atol: float = 0.0,
) -> None:
    """Raise ``LookAheadError`` if ``fn``'s output at or before a time depends on later rows.

    The rows after random cut points (cut 0 always among them) are rescaled, reordered, have
    signs and zeros moved and their NaN pattern changed; outputs up to the cut must not change.
    """
    data = np.array(x, dtype=np.float64)
    if data.ndim < 1 or data.shape[0] < 2:
        raise ValueError("check_causal needs x with at least 2 rows.")
    check_seed(rng, what="rng")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    reference = np.asarray(fn(data.copy()))
    if reference.ndim == 0:
        raise LookAheadError(
            f"the output is one value (shape ()), not one per row: {_name(fn)} reduces over "
            "every row of x, so what it gives at any time depends on future rows."
        )
    if reference.shape[0] != data.shape[0]:
        raise ValueError(
            f"check_causal needs {_name(fn)} to return one row per row of x ({data.shape[0]} "
            f"rows), to match outputs with times; it returned shape {reference.shape}."
        )
    count = check_count("n_checks", n_checks, 1)
    check_number("rtol", rtol, "ge0")
    check_number("atol", atol, "ge0")
    extra: list[int] = (
        generator.integers(0, data.shape[0] - 1, size=count - 1).tolist() if count > 1 else []
    )
    for cut in [0, *sorted(extra)]:
        for variant in _perturbations(data, cut, generator):
            output = np.asarray(fn(variant))
            if output.shape != reference.shape:
                raise LookAheadError(
                    f"the output's shape changed from {reference.shape} to {output.shape} when "
                    f"rows after {cut} changed: it depends on future rows."
                )
            head = slice(0, cut + 1)
            same = np.isclose(output[head], reference[head], rtol=rtol, atol=atol, equal_nan=True)
            if not same.all():
                first = int(np.argwhere(~same)[0][0])
                raise LookAheadError(
                    f"output at time index {first} changed when only rows after the cut point "
                    f"{cut} changed: the transform looks ahead."
                )


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__
