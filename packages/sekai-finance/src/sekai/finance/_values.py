"""What a numeric parameter accepts: real numbers, never bools (finance.md §3.5).

``numbers.Real`` admits ``True``, and ``np.array([True, False], float)`` quietly gives
``[1.0, 0.0]``; every validator of the package asks these two functions instead.
"""

from __future__ import annotations

import numbers
from decimal import Decimal
from typing import TypeGuard

import numpy as np

from sekai._args import holds_bool
from sekai._numbers import decimal_float, object_floats, refused_kind, too_large

__all__ = [
    "check_count",
    "check_int",
    "check_number",
    "is_int",
    "is_real",
    "real_array",
    "real_float",
    "scalar",
    "too_large",
]


def scalar(value: object) -> object:
    """A 0-d array as the one value it holds (what NumPy reductions return, or another
    library's 0-d array, such as a JAX or torch scalar), a bfloat16 or other ml_dtypes scalar
    as an int64 or float64; else ``value``."""
    if isinstance(value, np.generic):
        return _held(np.asarray(value)) if value.dtype.kind == "V" else value
    if isinstance(value, np.ndarray):
        return _held(value) if value.ndim == 0 else value
    if getattr(value, "ndim", None) == 0 and hasattr(value, "__array__"):
        try:
            array = np.asarray(value)
        except (TypeError, RuntimeError, ValueError):  # e.g. a tensor on a GPU, or one that
            return value  # requires grad: the caller's check refuses it, naming its type
        return _held(array)
    return value


def _held(array: np.ndarray) -> object:
    """The number in a 0-d ``array``. The scalars of ml_dtypes' bfloat16, float8 and int4
    (JAX's reduced precisions, dtype kind "V") are no ``numbers.Real``: as an int64 or float64."""
    if array.dtype.kind == "V":
        for dtype in (np.int64, np.float64):
            if np.can_cast(array.dtype, dtype):
                return array.astype(dtype)[()]
    return array[()]


def is_real(value: object) -> bool:
    """A real number (a ``Decimal`` too, as in a list of them) that is not a bool, nor a numpy
    timedelta64 (an Integral to numpy, but a span of time, not a number)."""
    return isinstance(value, (numbers.Real, Decimal)) and not isinstance(
        value, (bool, np.bool_, np.timedelta64)
    )


def is_int(value: object) -> TypeGuard[numbers.Integral]:
    """An integer that :func:`is_real` takes (no bool, no timedelta64)."""
    return is_real(value) and isinstance(value, numbers.Integral)


_KINDS = {
    "b": "bools",
    "c": "complex numbers",
    "U": "strings",
    "S": "bytes",
    "m": "timedelta64",
    "M": "datetimes",
    "None": "None",
}


def real_array(name: str, value: object) -> np.ndarray:
    """``value`` as a new float64 array; ``TypeError`` naming ``name`` for bools, strings,
    complex numbers, dates or anything else that is not real numbers (NumPy would cast some
    without a word, and parse strings), also as the items of a list (a 0-d array by its dtype);
    ``ValueError`` for a number too large for a float64 (a Decimal's signalling NaN is NaN).
    """
    if holds_bool(value):
        raise TypeError(f"{name} must be real numbers, not bools.")
    try:
        raw = np.asarray(value)
        kind: str = raw.dtype.kind
        if kind == "O":
            kind = refused_kind(raw) or "O"
        elif kind == "V" and np.can_cast(raw.dtype, np.float64):  # bfloat16 and other ml_dtypes
            kind = "f"
        if kind in "iuf":
            return np.array(raw, dtype=np.float64)
        if kind == "O":  # e.g. Decimals or Fractions; complex ones fail to convert
            return object_floats(raw)
    except OverflowError as error:
        raise ValueError(f"{name} holds {too_large(error.args[0])}.") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be an array of real numbers, got {type(value).__name__}."
        ) from exc
    raise TypeError(f"{name} must be real numbers, got {_KINDS.get(kind, str(raw.dtype))}.")


def real_float(value: object) -> float | None:
    """A real number (not a bool) as a float, or None if it is not one or does not fit."""
    if isinstance(value, float):  # np.float64 too: ahead of is_real's ABC checks (per step)
        return float(value)
    if not is_real(value):
        return None
    try:
        if isinstance(value, Decimal):
            return decimal_float(value)
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return None


_BOUNDS = {None: "", "ge0": " >= 0", "gt0": " > 0"}
_INT64_MAX = 2**63 - 1


def check_number(name: str, value: object, bound: str | None = None) -> float:
    """``value`` (a real number, or a 0-d array of one) as a float: ``TypeError`` naming
    ``name`` for what is not a number (bools, strings, None), ``ValueError`` for a value that
    is not finite or not ``>= 0`` (``"ge0"``) / ``> 0`` (``"gt0"``) when asked."""
    value = scalar(value)
    accepted = f"a finite number{_BOUNDS[bound]}"
    if not is_real(value):
        raise TypeError(f"{name} must be {accepted}, got {type(value).__name__} {value!r}.")
    result = real_float(value)
    if result is None:
        raise ValueError(f"{name} must be {accepted}, got {too_large(value)}.")
    if not np.isfinite(result):
        raise ValueError(f"{name} must be {accepted}, got {value!r}.")
    if (bound == "ge0" and not result >= 0) or (bound == "gt0" and not result > 0):
        raise ValueError(f"{name} must be {accepted}, got {value!r}.")
    return result + 0.0  # -0.0 becomes 0.0


def check_count(name: str, value: object, minimum: int = 0, *, none_ok: bool = False) -> int:
    """``value`` as an int ``>= minimum``: ``TypeError`` naming ``name`` for what is not an
    int (bools, floats, numpy timedelta64), ``ValueError`` below ``minimum``. ``none_ok``: the
    caller takes None itself (the messages say so)."""
    accepted = f"an int >= {minimum}" + (" or None" if none_ok else "")
    if not is_int(value):
        raise TypeError(f"{name} must be {accepted}, got {type(value).__name__} {value!r}.")
    if int(value) < minimum:
        raise ValueError(f"{name} must be {accepted}, got {int(value)}.")
    if int(value) > _INT64_MAX:  # no array could be that long, nor a loop run that often
        raise ValueError(f"{name} must be {accepted} that fits in 64 bits, got {value}.")
    return int(value)


def check_int(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum``; ``ValueError`` naming it otherwise (bools refused).
    A 0-d array of any library is the number it holds, as the kernel modes take it."""
    number = scalar(value)
    if not is_int(number):  # named as given: a bfloat16 array is no float64
        raise ValueError(
            f"{name} must be an int >= {minimum}, got {type(value).__name__} {value!r}."
        )
    if int(number) < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {int(number)}.")
    if int(number) > _INT64_MAX:
        raise ValueError(f"{name} must be an int >= {minimum} that fits in 64 bits, got {number}.")
    return int(number)
