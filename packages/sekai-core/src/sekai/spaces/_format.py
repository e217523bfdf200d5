"""Formatting of bounds and values for space reprs."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["format_bound", "format_scalar"]

_MAX_SHOWN = 8


def format_scalar(value: Any, dtype: np.dtype[Any]) -> str:
    """Format one bound: floats in their shortest positional form, ints with ``str``."""
    if dtype.kind == "f":
        v = dtype.type(value)
        if dtype.itemsize > 4:
            # A float64 bound that is a float32 value prints like float32 (-4.8, not
            # -4.800000190734863): such bounds usually come from a float32 space.
            with np.errstate(over="ignore"):
                as32 = np.float32(v)
            if float(as32) == float(v):
                v = as32
        return np.format_float_positional(v, trim="0")
    return str(int(value))


def format_bound(values: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> str:
    """Format a bound array: a scalar if all entries are equal, else a flat (abridged) list."""
    flat = values.reshape(-1)
    if flat.size > 0 and bool((flat == flat[0]).all()):
        return format_scalar(flat[0], dtype)
    if flat.size > _MAX_SHOWN:
        head = ", ".join(format_scalar(v, dtype) for v in flat[:3])
        tail = ", ".join(format_scalar(v, dtype) for v in flat[-3:])
        return f"[{head}, ..., {tail}]"
    return "[" + ", ".join(format_scalar(v, dtype) for v in flat) + "]"
