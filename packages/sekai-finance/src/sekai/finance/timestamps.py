"""Timestamps of a price history: ``Time``, a timestamp looked up by value, and the checks and
conversions of ``MarketData``'s time axis."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import numpy as np

from sekai.finance._values import is_int, is_real, real_array, real_float

__all__ = [
    "TZ_HINT",
    "Time",
    "check_timestamps",
    "has_timezone",
    "holds_timezone",
    "time_hint",
    "timezone_refused",
    "to_datetime64",
]

TZ_HINT = (
    "timezone-aware timestamps are not supported; convert them to naive UTC first, e.g. "
    "index.tz_convert('UTC').tz_localize(None) (or tz_localize(None) to keep local time)."
)


# A time of day ("T" or a space after the date) followed by Z or a sign: the offsets NumPy
# parses ("...T03:04Z", "... 03:04:05+01:00", "...T03-0130"). "-" ends its class: itself.
_TIME_MARKS, _OFFSET_MARKS = "T ", "Z+-"
_UTC_OFFSET = re.compile(f"[{_TIME_MARKS}].*[{_OFFSET_MARKS}]")


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


_NS = np.dtype("datetime64[ns]")


def _as_ns(value: Any, name: str) -> Any:
    """A datetime64 scalar or array in ns; ``ValueError`` where NumPy would wrap it around."""
    if value.dtype == _NS:
        return value
    try:
        ns = value.astype(_NS)
        back = ns.astype(value.dtype)
    except OverflowError:  # NumPy 2.5 on raises where earlier ones wrap around
        back = None
    if back is None or not (
        bool(back == value) if np.ndim(value) == 0 else np.array_equal(back, value)
    ):
        raise ValueError(
            f"{name} holds a date outside the datetime64[ns] range (1677-09-22 .. 2262-04-11)."
        )
    return ns


def _text(value: str | bytes) -> str:
    """A date string as NumPy reads it: bytes as their text, without the spaces around it
    (NumPy takes a trailing space for a timezone too)."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return value.strip()


def has_timezone(value: object) -> bool:
    """Whether a timestamp carries a time zone: a ``tzinfo`` (a ``datetime``, a pandas
    Timestamp) or a date string (or bytes) with a UTC offset.

    NumPy only warns about a string with a UTC offset, then drops the offset (or converts an
    aware ``datetime`` to UTC). Looked for here: catching the warning would swap the
    process-wide warnings filters, which other threads share (one building data at the same
    time could leave "error" behind).
    """
    if getattr(value, "tzinfo", None) is not None:
        return True
    return isinstance(value, (str, bytes)) and _UTC_OFFSET.search(_text(value)) is not None


def holds_timezone(values: np.ndarray) -> bool:
    """Whether an entry of the 1-D array ``values`` carries a time zone, as ``has_timezone``
    finds it.

    A NumPy str or bytes array is looked through all at once: only its entries with a time
    mark before an offset mark (what ``_UTC_OFFSET`` needs) are read one by one, and a
    naive date string has none (the signs of ``2021-01-06T10:30`` come before its ``T``).
    """
    if values.dtype.kind not in "US":
        return any(has_timezone(v) for v in values.tolist())
    near = _near_offsets(_one_byte_text(values))
    return near is not None and any(has_timezone(v) for v in values[near].tolist())


def _one_byte_text(values: np.ndarray) -> np.ndarray:
    """A str array as bytes, one a character (its code point modulo 256: one beyond ASCII
    may read as a mark, which only sends its entry to the look one by one); bytes as they
    are."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "S" or values.size == 0:
        return values
    width = max(int(np.strings.str_len(values).max()), 1)
    units = values.view(np.uint32).reshape(values.size, -1)[:, :width]
    return units.astype(np.uint8).view(f"S{width}").reshape(values.shape)


def _columns_holding(grid: np.ndarray, mark: str) -> np.ndarray:
    """The columns (character positions) of the ``(entries, characters)`` byte grid where an
    entry holds ``mark``, in order."""
    hits = grid == ord(mark)
    # any() over the entries, 512 at a time: NumPy's inner loop then runs along 512 rows' bytes
    # rather than along one row's few
    cut = hits.shape[0] - hits.shape[0] % 512
    held = hits[:cut].reshape(-1, 512 * hits.shape[1]).any(axis=0).reshape(512, -1).any(axis=0)
    return np.flatnonzero(held | hits[cut:].any(axis=0))


def _near_offsets(text: np.ndarray) -> np.ndarray | None:
    """Where the bytes array ``text`` has an offset mark after a time mark (None: nowhere)."""
    if text.size == 0:
        return None
    grid = text.view(np.uint8).reshape(text.size, -1)
    columns = {mark: _columns_holding(grid, mark) for mark in _TIME_MARKS + _OFFSET_MARKS}
    times = [mark for mark in _TIME_MARKS if columns[mark].size]
    offsets = [mark for mark in _OFFSET_MARKS if columns[mark].size]
    # dates laid out alike (2021-01-06T10:30) have every sign before the first time mark
    if (
        not times
        or not offsets
        or (max(columns[mark][-1] for mark in offsets) < min(columns[mark][0] for mark in times))
    ):
        return None
    past = np.iinfo(np.int64).max  # a start past every entry's end: found nowhere
    first = np.full(text.shape, past)
    for mark in times:
        at = np.strings.find(text, mark.encode())
        first = np.minimum(first, np.where(at >= 0, at, past))
    after = np.where(first < past, first + 1, past)
    near = np.zeros(text.shape, dtype=bool)
    for mark in offsets:
        near |= np.strings.find(text, mark.encode(), after) >= 0
    return near


def timezone_refused(name: str) -> ValueError:
    """The error refusing timezone-aware timestamps given as ``name``: ``TZ_HINT`` after it."""
    return ValueError(f"{name}: {TZ_HINT}")


def time_hint(value: int, timestamps: np.ndarray) -> str:
    """``" An int is a row position; for the timestamp v pass Time(v)."`` where the int
    ``value``, taken as a row position, may have been meant as one of the numeric
    ``timestamps`` (other than ``0..T-1``, with ``value`` within their range); ``""``
    otherwise."""
    n_rows = int(timestamps.shape[0])
    if timestamps.dtype.kind == "M" or n_rows == 0:
        return ""
    if np.array_equal(timestamps, np.arange(n_rows)):
        return ""
    if not timestamps[0].item() <= value <= timestamps[-1].item():
        return ""
    return f" An int is a row position; for the timestamp {value} pass Time({value})."


def to_datetime64(value: object, name: str = "timestamp") -> np.datetime64:
    """Convert a date string, ``datetime``, ``date``, pandas Timestamp or datetime64 to ns;
    errors name ``name``."""
    if isinstance(value, (bool, np.bool_)) or is_real(value) or value is None:
        raise TypeError(
            f"{name} must be a date string, datetime, date, pandas Timestamp or datetime64, "
            f"got {type(value).__name__} {value!r}."
        )
    if has_timezone(value):
        raise ValueError(TZ_HINT)
    if hasattr(value, "to_datetime64"):  # pandas Timestamp
        value = value.to_datetime64()
    given = value
    if isinstance(value, (str, bytes)):  # NumPy reads bytes as it reads their text
        value = _text(value)
    try:
        result: np.datetime64 = np.datetime64(value)  # type: ignore[call-overload]
        # Read in days too: NumPy wraps digits finer than a second around in its own unit.
        day = np.datetime64(value, "D") if isinstance(value, str) else None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: cannot read {given!r} as a timestamp: {exc}") from exc
    if np.isnat(result):
        raise ValueError(f"{name} must not be NaT.")
    if day is not None:
        _as_ns(day, name)
    converted: np.datetime64 = _as_ns(result, name)
    return converted


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
            number = real_float(value)  # a Decimal beyond float64 too, not infinity
            if number is None:
                raise ValueError(
                    f"Time() takes a number that fits a float64; this {type(value).__name__} "
                    "is too large."
                )
            if not np.isfinite(number):
                raise ValueError(f"Time() takes a finite number, got {value!r}.")
            value = int(value) if is_int(value) else number
        elif isinstance(value, (np.datetime64, _dt.date, str)) or hasattr(value, "to_datetime64"):
            to_datetime64(value, "Time()")  # validate now, keep the user's value for the repr
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


_INT64 = np.iinfo(np.int64)


def _check_int64(values: list[Any]) -> None:
    """Refuse an integer timestamp beyond int64 (as a float64 it would be rounded, and
    distinct timestamps could become equal)."""
    # Python compares ints and floats exactly: when the extremes fit (NaN makes them fail),
    # every entry does, and the entries need no look one by one.
    if _INT64.min <= min(values) and max(values) <= _INT64.max:
        return
    for i, value in enumerate(values):
        number = int(value) if is_int(value) else 0
        if not _INT64.min <= number <= _INT64.max:
            shown = str(number)
            if len(shown) > 30:  # 10**400 would fill the message
                shown = f"{shown[:12]}... ({len(shown.lstrip('-'))} digits)"
            side = "large" if number > 0 else "small"
            raise ValueError(
                f"timestamps[{i}] is {shown}, an integer too {side} for an int64 (timestamps "
                "are int64 or float64 numbers, or datetimes)."
            )


def check_timestamps(timestamps: object, n_rows: int) -> np.ndarray:
    """``timestamps`` (None: ``0..n_rows-1``) as a read-only int64, float64 or datetime64[ns]
    array; ``TypeError``/``ValueError`` naming ``timestamps`` for anything else."""
    if timestamps is None:
        return _frozen(np.arange(n_rows, dtype=np.int64))
    if hasattr(timestamps, "tz") and getattr(timestamps, "tz", None) is not None:
        raise ValueError(TZ_HINT)
    fast = np.asarray(timestamps) if hasattr(timestamps, "__array__") else None
    if fast is not None and fast.dtype.kind in "iufM":  # numpy arrays, pandas indexes
        ts = fast
    else:
        try:
            if isinstance(timestamps, (str, bytes)):
                raise TypeError
            values = list(timestamps)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(
                f"timestamps must be a sequence of {n_rows} numbers or datetimes, got "
                f"{type(timestamps).__name__}."
            ) from None
        if values and all(is_real(v) for v in values):
            _check_int64(values)
            ts = np.asarray(values)
            if ts.dtype.kind == "O":  # e.g. Fractions or Decimals
                ts = real_array("timestamps", values)
        else:
            ts = np.array(
                [to_datetime64(v, f"timestamps[{i}]") for i, v in enumerate(values)],
                dtype="datetime64[ns]",
            )
    if ts.ndim != 1 or ts.shape[0] != n_rows:
        raise ValueError(f"timestamps must have shape ({n_rows},), got {ts.shape}.")
    if ts.dtype.kind == "M":
        missing = np.flatnonzero(np.isnat(ts))
        if missing.size:
            shown = str(missing[:5].tolist())
            if missing.size > 5:
                shown = f"{shown[:-1]}, ...]"
            raise ValueError(
                f"timestamps must not contain NaT, got {missing.size} at position(s) {shown}."
            )
        ts = _as_ns(ts, "timestamps")
    elif ts.dtype.kind in "iu":
        if ts.dtype == np.uint64 and (ts > np.iinfo(np.int64).max).any():
            raise ValueError("timestamps hold an integer too large for an int64.")
        ts = ts.astype(np.int64)
    elif ts.dtype.kind == "f":
        if not np.all(np.isfinite(ts)):
            raise ValueError("timestamps must be finite (no NaN or inf).")
    else:
        raise TypeError(f"timestamps must be numbers or datetimes, got dtype {ts.dtype}.")
    later = ts[1:] > ts[:-1]
    if not later.all():
        row = int(np.argmin(later)) + 1
        what = "repeats" if ts[row] == ts[row - 1] else "comes before"
        raise ValueError(
            f"timestamps must be strictly increasing: row {row} ({ts[row]}) {what} row "
            f"{row - 1} ({ts[row - 1]})."
        )
    return _frozen(ts.copy())
