"""Validation of Box arguments: shapes, dtypes and bounds."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Mapping
from typing import Any, NoReturn, SupportsIndex

import numpy as np
from numpy.typing import NDArray

from sekai._args import holds_bool
from sekai._warnings import caller_stacklevel

__all__ = [
    "as_bound",
    "bound_from_json",
    "check_dtype",
    "exact_ints",
    "normalise_shape",
    "to_float_dtype",
    "to_integer_dtype",
]


def normalise_shape(shape: Any, owner: str = "Box") -> tuple[int, ...] | None:
    """Coerce ``shape`` (None, an int or a sequence of ints >= 0) to a tuple of Python ints;
    errors name it the ``owner``'s shape (the space's class)."""
    if shape is None:
        return None
    if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
        return shape  # already one (a subclass's normalised shape, given to Space.__init__)
    if isinstance(shape, (bool, np.bool_)):
        raise TypeError(f"{owner} shape must be a tuple of ints or an int, got {shape!r}.")
    if isinstance(shape, SupportsIndex) and not (isinstance(shape, np.ndarray) and shape.ndim):
        shape = (shape,)
    try:
        entries = tuple(shape)
    except TypeError:
        raise TypeError(
            f"{owner} shape must be a tuple of ints or an int, got {shape!r}."
        ) from None
    result = []
    for entry in entries:
        if (
            isinstance(entry, (bool, np.bool_))
            or not isinstance(entry, SupportsIndex)
            or (isinstance(entry, np.ndarray) and entry.ndim != 0)  # np.array([[2, 3]])
        ):
            raise TypeError(f"{owner} shape entries must be ints, got {shape!r}.")
        try:
            result.append(operator.index(entry))  # int() would cut np.array(3.5) to 3
        except TypeError:
            raise TypeError(f"{owner} shape entries must be ints, got {shape!r}.") from None
    if any(s < 0 for s in result):
        raise ValueError(f"{owner} shape entries must be >= 0, got {tuple(result)}.")
    return tuple(result)


_FLOAT64_MAX = int(np.finfo(np.float64).max)
# How a strict JSON writer (one without the Infinity token) writes the infinite bounds.
_JSON_INFINITIES = {"Infinity": math.inf, "-Infinity": -math.inf}


def bound_from_json(d: Mapping[str, Any], field: str, shape: tuple[int, ...] | None) -> Any:
    """``d[field]``, a bound of ``shape`` as JSON holds it, for Box to check: the strings
    ``"Infinity"`` / ``"-Infinity"`` as floats, ``[]`` or the bound ``tolist()`` writes for a
    zero-size ``shape`` as a zero-size bound of it (``tolist()`` drops the dimensions after
    the first 0: ``(1, 0, 1)`` as ``[[]]``), anything else as given (an empty bound of another
    nesting is left to Box, which takes it only where it broadcasts to ``shape``)."""
    value = _json_number(d[field])
    if shape is not None and math.prod(shape) == 0 and isinstance(value, list):
        empty = np.empty(shape)
        if value == [] or value == empty.tolist():
            return empty
    return value


def _json_number(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_number(item) for item in value]
    if isinstance(value, str):
        return _JSON_INFINITIES.get(value, value)
    return value


def exact_ints(x: Any) -> NDArray[Any] | None:
    """``x``, an int or a (nested) list or tuple of ints (Python's or NumPy's, not bools), as
    an array that holds exactly those ints: uint64 or int64 where one of them holds them all,
    else an object array of Python ints (no integer Box holds those together). None when ``x``
    holds anything else, or is ragged.

    NumPy makes ints on both sides of 2**63 (``[2**63 + 1, 1]``) float64, rounding them, and
    holds ints beyond 64 bits as objects: where ``np.asarray(x)`` is float64 or object, this
    is how Python ints are judged by value. A list of floats costs a look at its first entry.
    """
    if isinstance(x, np.ndarray) or not _only_ints(x):
        return None
    arr = np.array(x, dtype=object)
    values = arr.reshape(-1).tolist()
    if not all(isinstance(v, (int, np.integer)) for v in values):  # ragged: lists in arr
        return None
    exact = [int(v) for v in values]
    low, high = min(exact, default=0), max(exact, default=0)
    if low >= 0 and high <= _UINT64_MAX:
        dt: Any = np.uint64
    elif low >= _INT64_MIN and high <= _INT64_MAX:
        dt = np.int64
    else:
        dt = object
    return np.array(exact, dtype=dt).reshape(arr.shape)


_UINT64_MAX = 2**64 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _only_ints(x: Any) -> bool:
    """Whether ``x`` is an int or a (nested) list or tuple holding only ints (not bools)."""
    if isinstance(x, (list, tuple)):
        return all(_only_ints(item) for item in x)
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def check_dtype(dtype: Any) -> np.dtype[Any]:
    """Return ``dtype`` as a NumPy integer or floating dtype (None means float32)."""
    try:
        dt = np.dtype(np.float32 if dtype is None else dtype)
    except TypeError as exc:
        raise TypeError(f"Box dtype must be a NumPy dtype, got {dtype!r} ({exc}).") from None
    if dt.kind == "b":
        raise TypeError(
            "Box dtype must be an integer or floating dtype, got bool; use MultiBinary for "
            "binary values."
        )
    if dt.kind not in "iuf":
        raise TypeError(f"Box dtype must be an integer or floating dtype, got {dt}.")
    return dt


def as_bound(name: str, value: Any) -> NDArray[Any]:
    """Convert a bound to a numeric array, rejecting NaN.

    Python ints beyond 64 bits (which NumPy holds only as objects) stay exact Python ints in an
    object array, for ``to_integer_dtype`` / ``to_float_dtype`` to clip, and so do lists of
    ints on both sides of 2**63 (``exact_ints``: NumPy would round them); mixed with floats, all
    become float64, unless an int is beyond float64's range too: then the ints stay exact
    beside the floats (still an object array).
    """
    if holds_bool(value):
        raise TypeError(f"Box {name} must be a number or an array of numbers, not bools.")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Box {name} must be a number or an array of numbers: {exc}") from None
    if arr.dtype.kind == "f" and isinstance(value, (list, tuple)):
        # ints on both sides of 2**63 (as to_jsonable() writes a uint64 bound): kept exact
        ints = exact_ints(value)
        if ints is not None:
            arr = ints
    if arr.dtype == object:  # NumPy holds ints beyond 64 bits only as objects
        arr = _object_bound(name, arr)
    elif arr.dtype.kind not in "biuf":
        raise TypeError(f"Box {name} must be numeric, got an array of dtype {arr.dtype}.")
    if arr.dtype.kind == "f" and bool(np.isnan(arr).any()):
        raise ValueError(f"Box {name} contains NaN; use -np.inf/np.inf for unbounded dimensions.")
    return arr


def _object_bound(name: str, arr: NDArray[Any]) -> NDArray[Any]:
    """An object array of numbers as exact Python ints and floats (still an object array), or
    as float64 when there are floats and every int fits float64."""
    items = arr.reshape(-1).tolist()
    if not all(isinstance(v, (int, float, np.integer, np.floating)) for v in items):
        raise TypeError(f"Box {name} must be numeric, got an array of dtype object.")
    exact = [int(v) if isinstance(v, (int, np.integer)) else float(v) for v in items]
    if all(isinstance(v, int) for v in exact) or any(_beyond_float64(v) for v in exact):
        if any(isinstance(v, float) and math.isnan(v) for v in exact):
            raise ValueError(
                f"Box {name} contains NaN; use -np.inf/np.inf for unbounded dimensions."
            )
        return np.array(exact, dtype=object).reshape(arr.shape)
    return np.array(exact, dtype=np.float64).reshape(arr.shape)


def _beyond_float64(value: int | float) -> bool:
    return isinstance(value, int) and abs(value) > _FLOAT64_MAX


def _infinite(value: Any) -> bool:
    """Whether ``value``, an exact number of an object bound, is a float infinity."""
    return isinstance(value, float) and math.isinf(value)


def to_float_dtype(name: str, arr: NDArray[Any], dt: np.dtype[Any]) -> NDArray[Any]:
    """Convert a bound to floating ``dt``: infinities stay, and so do finite values that round
    to a finite value of ``dt`` (``3.4028235e38``, as float32's largest value prints, is that
    value); finite values that would become +-inf are clipped to its largest finite values,
    with a warning (as ``to_integer_dtype`` clips)."""
    info = np.finfo(dt)
    if arr.dtype == object:  # exact numbers from as_bound(): compared exactly
        limit = int(info.max)
        # Half a unit in the last place above the largest value: from there on, rounding to
        # the nearest value of dt (ties to even, the largest value's mantissa is odd) gives inf.
        overflow = 2**info.maxexp - 2 ** (info.maxexp - info.nmant - 2)
        items = arr.reshape(-1).tolist()
        outside = any(not _infinite(v) and abs(v) >= overflow for v in items)
        clipped = [v if _infinite(v) else max(-limit, min(limit, v)) for v in items]
        out = np.array(clipped, dtype=dt).reshape(arr.shape)
    else:
        with np.errstate(over="ignore"):  # values that overflow are clipped below
            out = np.array(arr, dtype=dt)
        overflowed = np.isinf(out) & np.isfinite(arr)
        outside = bool(overflowed.any())
        if outside:
            out[overflowed] = np.where(arr[overflowed] > 0, info.max, info.min)
    if outside:
        _clipped(name, dt, info.min, info.max)
    return out


def _clipped(name: str, dt: np.dtype[Any], low: Any, high: Any) -> None:
    """Warn that the Box bound ``name`` had values outside ``dt``'s range ``[low, high]``."""
    warnings.warn(
        f"Box {name} has values outside the range of {dt}; they were clipped to [{low}, {high}].",
        UserWarning,
        stacklevel=caller_stacklevel(),
    )


def to_integer_dtype(name: str, arr: NDArray[Any], dt: np.dtype[Any]) -> NDArray[Any]:
    """Convert a bound to integer ``dt``: inf and out-of-range values become the dtype limits."""
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        fractional = finite & (arr != np.floor(np.where(finite, arr, 0.0)))
        if bool(fractional.any()):
            _fractional(name, float(arr[fractional].reshape(-1)[0]), dt)
        # float(hi) may round above hi (2**63 for int64): then that float is out of range too.
        hi_f, lo_f = float(hi), float(lo)
        too_high = arr >= hi_f if hi_f > hi else arr > hi_f
        too_low = arr <= lo_f if lo_f < lo else arr < lo_f
        infinite = ~finite
    else:  # ints, or the exact numbers of an object bound (as_bound)
        infinite = np.zeros(arr.shape, dtype=bool)
        if arr.dtype == object:
            items = arr.reshape(-1).tolist()
            for value in items:
                if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
                    _fractional(name, value, dt)
            infinite.reshape(-1)[:] = [_infinite(v) for v in items]
        too_high = arr > hi
        too_low = arr < lo
    if bool(((too_high | too_low) & ~infinite).any()):
        _clipped(name, dt, lo, hi)
    out = np.empty(arr.shape, dtype=dt)
    inside = ~(too_high | too_low)
    out[inside] = arr[inside]
    out[too_high] = hi
    out[too_low] = lo
    return out


def _fractional(name: str, bad: float, dt: np.dtype[Any]) -> NoReturn:
    raise ValueError(
        f"Box {name} has the fractional value {bad!r}, but integer dtype {dt} needs "
        "whole-number bounds."
    )
