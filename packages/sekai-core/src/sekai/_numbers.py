"""How a value reads as a number, one rule for unflatten, the kernel drivers' ``set_attr`` and
sekai-finance's validators: an item of an object array is classified as NumPy would classify it
alone (a 0-d array of any library by its dtype), and a ``Decimal`` becomes a float without
turning a value beyond float64 into infinity."""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["array_kind", "decimal_float", "item_kind", "object_floats", "refused_kind", "too_large"]


def array_kind(value: object) -> str | None:
    """The NumPy dtype kind of an array or scalar of any library (NumPy, JAX, torch), of any
    number of dimensions (a bfloat16 is ``"f"``, a torch dtype is read through NumPy), or None
    for a value without a dtype and a shape. ``"O"`` where NumPy cannot read it (a tensor on a
    GPU)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        return None
    try:
        numpy_dtype: np.dtype[Any] = np.dtype(dtype)
    except TypeError:  # a dtype NumPy cannot read (torch's)
        try:
            numpy_dtype = np.asarray(value).dtype
        except (TypeError, ValueError, RuntimeError):  # a tensor on a GPU
            return "O"
    if numpy_dtype.kind == "V" and np.can_cast(numpy_dtype, np.float64):  # ml_dtypes' bfloat16
        return "f"
    return numpy_dtype.kind


def item_kind(value: object) -> str:
    """The NumPy dtype kind of ``value`` as one item of an object array: a scalar or 0-d array
    of any library (JAX, torch) by its dtype (:func:`array_kind`), a Decimal or other
    ``numbers.Real`` ``"f"``, ``"None"`` for None, ``"O"`` for what is none of these (the
    caller's float cast decides)."""
    if value is None:
        return "None"
    if isinstance(value, (str, bytes)):
        return "U" if isinstance(value, str) else "S"
    if getattr(value, "ndim", None) == 0 and hasattr(value, "dtype"):
        if isinstance(value, np.ndarray) and value.dtype == object:
            return item_kind(value[()])
        return array_kind(value) or "O"
    if isinstance(value, bool):
        return "b"
    if isinstance(value, numbers.Integral):
        return "i"
    if isinstance(value, (numbers.Real, Decimal)):
        return "f"
    if isinstance(value, numbers.Complex):
        return "c"
    return "O"


# What an object array's float cast is given: real numbers, and other objects ("O"), which it
# converts if they say how (``__float__``); a bool, a date or a span is a number only to NumPy.
_CAST = frozenset("iufO")


def refused_kind(array: NDArray[Any]) -> str | None:
    """The kind (:func:`item_kind`) of the first item of the object ``array`` that its float
    cast must not be given (None, a bool, a string, a complex number, a date or a span), or
    None if there is none."""
    return next((k for k in map(item_kind, array.reshape(-1).tolist()) if k not in _CAST), None)


def decimal_float(value: Decimal) -> float:
    """``value`` as a float: a signalling NaN is NaN, as a quiet one is (``float()`` refuses
    it), and a finite one beyond float64 an ``OverflowError``, as such an int is (``float()``
    makes it infinite)."""
    if value.is_nan():
        return math.nan
    number = float(value)
    if math.isinf(number) and value.is_finite():
        raise OverflowError(value)
    return number


def object_floats(array: NDArray[Any]) -> NDArray[np.float64]:
    """An object array of real numbers (None as NaN) as a new float64 array, its items read as
    :func:`item_kind` reads them: a 0-d object array by the item it holds, a Decimal converted
    by :func:`decimal_float`.

    Raises:
        OverflowError: a number beyond float64; its argument is that number.
        TypeError, ValueError: an item that is no number (the float cast's own errors).
    """
    given = array.reshape(-1).tolist()
    items = [_number(item) for item in given]
    if any(item is not old for item, old in zip(items, given)):
        flat = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):  # one by one: a sequence item stays one item
            flat[i] = item
        array = flat.reshape(array.shape)
    try:
        floats: NDArray[np.float64] = array.astype(np.float64)
    except OverflowError:  # an int: name it, as decimal_float names a Decimal
        raise OverflowError(next((v for v in items if _overflows(v)), None)) from None
    return floats


def _number(item: object) -> object:
    """An item of an object array as its float cast is given it: a 0-d object array as the
    item it holds, a Decimal as its float (:func:`decimal_float`)."""
    while isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype == object:
        item = item[()]
    return decimal_float(item) if isinstance(item, Decimal) else item


def _overflows(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except OverflowError:
        return True
    except (TypeError, ValueError):
        pass
    return False


def too_large(value: object) -> str:
    """How an error shows a number beyond float64: an int by its kind (its digits would fill
    the message), any other (a Decimal) by its repr, unless that is as long (a Fraction)."""
    if isinstance(value, numbers.Integral):
        return "an int too large for a float64"
    shown = repr(value)
    if len(shown) > _SHOWN:
        return f"a {type(value).__name__} too large for a float64"
    return f"{shown}, too large for a float64"


# The longest repr an error shows in full (Decimal('-1.2345678901234567890E+400') fits).
_SHOWN = 60
