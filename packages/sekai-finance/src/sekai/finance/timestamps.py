"""Timestamps of a price history: ``Time``, a timestamp looked up by value, and the checks and
conversions of ``MarketData``'s time axis."""

from __future__ import annotations

import datetime as _dt
import numbers
from typing import Any

import numpy as np

from sekai.finance._values import is_real

__all__ = ["TZ_HINT", "Time", "check_timestamps", "to_datetime64"]

TZ_HINT = (
    "timezone-aware timestamps are not supported; convert them to naive UTC first, e.g. "
    "index.tz_convert('UTC').tz_localize(None) (or tz_localize(None) to keep local time)."
)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def to_datetime64(value: object) -> np.datetime64:
    """Convert a date string, ``datetime``, ``date``, pandas Timestamp or datetime64 to ns."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("a bool is not a timestamp.")
    if getattr(value, "tzinfo", None) is not None:
        raise ValueError(TZ_HINT)
    if hasattr(value, "to_datetime64"):  # pandas Timestamp
        value = value.to_datetime64()
    try:
        result: np.datetime64 = np.datetime64(value, "ns")  # type: ignore[call-overload]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read {value!r} as a timestamp: {exc}") from exc
    if np.isnat(result):
        raise ValueError("timestamps must not be NaT.")
    return result


class Time:
    """A timestamp to look up by value where a plain int would mean a row position.

    Args:
        value: a number (numeric time axes, e.g. epoch seconds) or anything datetime-like
            (``datetime64``, ``datetime``, ``date``, pandas ``Timestamp``, a date string).
    """

    __slots__ = ("value",)
    value: Any

    def __init__(self, value: object) -> None:
        if isinstance(value, Time):
            value = value.value
        if isinstance(value, (bool, np.bool_)):
            raise TypeError("Time() takes a number or a datetime-like value, got a bool.")
        if is_real(value):
            value = int(value) if _is_int(value) else float(value)  # type: ignore[call-overload, arg-type]
            if not np.isfinite(value):
                raise ValueError(f"Time() takes a finite number, got {value!r}.")
        elif isinstance(value, (np.datetime64, _dt.date, str)) or hasattr(value, "to_datetime64"):
            to_datetime64(value)  # validate now, keep the user's value for the repr
        else:
            raise TypeError(
                f"Time() takes a number or a datetime-like value, got {type(value).__name__}."
            )
        object.__setattr__(self, "value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Time is immutable.")

    def _key(self) -> object:
        """What equality and hashing compare: the number, or the instant in ns."""
        value = self.value
        return value if is_real(value) else ("ns", int(to_datetime64(value).astype(np.int64)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("Time", self._key()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Time, (self.value,))  # __setattr__ refuses the default slot restore

    def __repr__(self) -> str:
        return f"Time({self.value!r})"


def check_timestamps(timestamps: object, n_rows: int) -> np.ndarray:
    if timestamps is None:
        return _frozen(np.arange(n_rows, dtype=np.int64))
    if hasattr(timestamps, "tz") and getattr(timestamps, "tz", None) is not None:
        raise ValueError(TZ_HINT)
    values = list(timestamps) if not isinstance(timestamps, np.ndarray) else None  # type: ignore[call-overload]
    if values is not None:
        if values and all(is_real(v) for v in values):
            ts = np.asarray(values)
        else:
            ts = np.array([to_datetime64(v) for v in values], dtype="datetime64[ns]")
    else:
        ts = np.asarray(timestamps)
        if ts.dtype.kind in "OUS":
            ts = np.array([to_datetime64(v) for v in ts.ravel()], dtype="datetime64[ns]")
    if ts.ndim != 1 or ts.shape[0] != n_rows:
        raise ValueError(f"timestamps must have shape ({n_rows},), got {ts.shape}.")
    if ts.dtype.kind == "M":
        ts = ts.astype("datetime64[ns]")
        if np.isnat(ts).any():
            raise ValueError("timestamps must not contain NaT.")
        diffs_ok = bool(np.all(ts[1:] > ts[:-1]))
    elif ts.dtype.kind in "iu":
        ts = ts.astype(np.int64)
        diffs_ok = bool(np.all(ts[1:] > ts[:-1]))
    elif ts.dtype.kind == "f":
        if not np.all(np.isfinite(ts)):
            raise ValueError("timestamps must be finite (no NaN or inf).")
        diffs_ok = bool(np.all(ts[1:] > ts[:-1]))
    else:
        raise TypeError(f"timestamps must be numbers or datetimes, got dtype {ts.dtype}.")
    if not diffs_ok:
        raise ValueError("timestamps must be strictly increasing.")
    return _frozen(ts.copy())
