"""Inverse of flatten: turn a flat vector back into a member of the space."""

from __future__ import annotations

from functools import singledispatch
from math import isnan
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._clip import clip
from sekai._numbers import item_kind, object_floats
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.flatten import _plan, flatdim, not_flattenable
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["unflatten"]

# ndarray.any() goes through a Python-level wrapper; counting is a single C call.
_any = np.count_nonzero
# Up to this many entries, math.isnan over tolist() beats np.isnan and a count.
_FEW = 16


def _numbers(space: Space[Any], x: Any) -> NDArray[Any]:
    """``x`` as an array of real numbers: an object array (``[None, 1]``, numbers of several
    types and libraries) and a float type NumPy does not know (bfloat16) as float64, where NaN
    (and None) is then seen; strings, dates, complex numbers and other objects are refused, not
    parsed or converted (Box refuses complex dtypes too)."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as e:  # torch's bfloat16, a grad-tracking tensor
        raise TypeError(
            f"unflatten needs real numbers NumPy can read for {space!r}; {type(x).__name__} "
            f"{x!r} cannot be read ({e})."
        ) from None
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr
    if kind == "V" and np.can_cast(arr.dtype, np.float64):  # ml_dtypes' bfloat16, float8...
        return arr.astype(np.float64)
    if kind == "O":
        items = arr.reshape(-1).tolist()
        odd = next((v for v in items if item_kind(v) not in _TAKEN), _NONE)
        if odd is _NONE:
            try:
                return object_floats(arr)
            except OverflowError:
                raise ValueError(
                    f"unflatten needs values a float64 holds for {space!r}, got a number too "
                    "large for a float64."
                ) from None
        raise TypeError(
            f"unflatten needs real numbers for {space!r}, got an object array holding "
            f"{odd!r} ({type(odd).__name__})."
        )
    raise TypeError(
        f"unflatten needs real numbers for {space!r}, got an array of dtype {arr.dtype}."
    )


_NONE = object()
# What an object array's items may be: None (NaN), bools, real numbers of any library (a
# Decimal, a Fraction, a JAX scalar); np.timedelta64 is an integer to Python, not to its dtype.
_TAKEN = frozenset(("None", "b", "i", "u", "f"))


def _flat(space: Space[Any], x: Any) -> NDArray[Any]:
    arr = _numbers(space, x)
    size = flatdim(space)
    if arr.size != size:
        raise ValueError(
            f"unflatten needs {size} values for {space!r}, got an array of shape {arr.shape}."
        )
    return arr.reshape(-1)


@singledispatch
def unflatten(space: Space[Any], x: Any) -> Any:
    """Turn a flat vector into a member of ``space`` (the inverse of ``flatten``).

    Box values are reshaped, cast and clipped into bounds (ints rounded, NaN -> ``zero()``);
    one-hot blocks become their argmax; MultiBinary entries become ``x > 0.5``.

    Raises:
        NotImplementedError: no implementation is registered for the space's type.
        TypeError: ``x`` holds something other than real numbers (strings, dates, complex
            numbers); a None or a Decimal NaN (a signaling one too) in an object array counts
            as NaN, which becomes zero.
        ValueError: ``x`` has the wrong number of entries, or a number too large for a float64.
    """
    raise NotImplementedError(f"unflatten not implemented for {type(space).__name__}")


@unflatten.register(Box)
def _unflatten_box(space: Box, x: Any) -> NDArray[Any]:
    arr = _numbers(space, x)
    if arr.size != space._low.size:  # flatdim(space), without its dispatch
        _flat(space, arr)  # raises the size error
    flat = arr.reshape(space.shape)
    kind = arr.dtype.kind
    nan = None
    if kind == "f" and _has_nan(arr):
        nan = np.isnan(flat)
    dt = space.dtype
    if dt.kind == "f":
        if flat.dtype is dt:  # clip() returns a new array: no copy to make
            out = flat
        else:
            with np.errstate(over="ignore"):
                out = flat.astype(dt)
        if nan is not None and _any(nan):
            out = np.where(nan, space._zero, out)
        clipped = clip(out, space._low, space._high)
        # np.clip returns a scalar for 0-d input; samples are always arrays.
        return clipped if type(clipped) is np.ndarray else np.asarray(clipped, dtype=dt)
    values = np.rint(flat.astype(np.float64))
    if nan is not None and _any(nan):
        values = np.where(nan, space._zero.astype(np.float64), values)
    low, high = space._low, space._high
    low_f, high_f = low.astype(np.float64), high.astype(np.float64)
    # Bounds that float64 holds exactly (every int of 32 bits or less): clipping lands on them,
    # nothing to snap.
    if (
        dt.itemsize <= 4
        or not low.size
        or (int(low.min()) >= -(2**53) and int(high.max()) <= 2**53)
    ):
        return np.asarray(clip(values, low_f, high_f)).astype(dt)
    # float64 cannot hold every int64; snap anything at or past a float bound to the exact bound.
    at_high = values >= high_f
    at_low = values <= low_f
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.asarray(clip(values, low_f, high_f)).astype(dt)
    out[at_high] = high[at_high]
    out[at_low] = low[at_low]
    return out


def _has_nan(arr: NDArray[Any]) -> bool:
    """Whether a float array holds a NaN (a short 1-D one through Python floats: 2x faster)."""
    if arr.ndim == 1 and arr.size <= _FEW:
        return any(map(isnan, arr.tolist()))
    return bool(_any(np.isnan(arr)))


@unflatten.register(Discrete)
def _unflatten_discrete(space: Discrete, x: Any) -> np.int64:
    value: np.int64 = np.int64(space.start + int(np.argmax(_flat(space, x))))
    return value


@unflatten.register(MultiDiscrete)
def _unflatten_multi_discrete(space: MultiDiscrete, x: Any) -> NDArray[Any]:
    flat = _flat(space, x)
    width = space._flat_width
    if width:  # blocks of one size: rows of a matrix
        picks: Any = flat.reshape(-1, width).argmax(axis=1)
    else:
        offsets, counts = space._flat_offsets.tolist(), space._flat_n.tolist()
        picks = [int(flat[a : a + n].argmax()) for a, n in zip(offsets, counts)]
    # np.asarray: the sum is a NumPy scalar for a 0-d nvec; samples are always arrays.
    return np.asarray(
        np.asarray(picks, dtype=np.int64).reshape(space.shape) + space.start, dtype=space.dtype
    )


@unflatten.register(MultiBinary)
def _unflatten_multi_binary(space: MultiBinary, x: Any) -> NDArray[np.int8]:
    return (_flat(space, x).reshape(space.shape) > 0.5).astype(np.int8)


@unflatten.register(Dict)
def _unflatten_dict(space: Dict, x: Any) -> dict[Any, Any]:
    flat = _flat(space, x)
    return {
        key: unflatten(child, flat[start:stop]) for key, child, _, start, stop in _plan(space)[1]
    }


@unflatten.register(Tuple)
def _unflatten_tuple(space: Tuple, x: Any) -> tuple[Any, ...]:
    flat = _flat(space, x)
    return tuple(unflatten(child, flat[start:stop]) for _, child, _, start, stop in _plan(space)[1])


@unflatten.register(MaskedBox)
def _unflatten_masked_box(space: MaskedBox, x: Any) -> dict[Any, Any]:
    out = _unflatten_dict(space, x)
    # Empty rows must hold fill_value for the result to be a member.
    empty = out["mask"] == 0
    out["values"][empty] = space._fill_rows[empty]
    return out


@unflatten.register(Sequence)
def _unflatten_sequence(space: Sequence, x: Any) -> Any:
    raise not_flattenable("unflatten", space)
