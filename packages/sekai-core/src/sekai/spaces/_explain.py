"""Why a value is not in a space: the first failing part, found the way ``contains`` looks.

``why_not_in(space, x)`` is for messages (check_env, ``Sequence.pack``), called once
``contains`` has said no; it is a ``functools.singledispatch`` function, so a custom space may
register its own reasons. Spaces without one get a plain "is not in <space>".
"""

from __future__ import annotations

import collections.abc as cabc
from functools import singledispatch
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._args import type_name
from sekai.spaces._format import format_scalar
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["Reason", "short_repr", "why_not_in"]

#: ``(path, reason)``: where the value fails, as indexing (``"['prices'][3, 1]"``, ``""`` for
#: the value itself), and why, as a phrase that follows it (``"is 1.5, outside [0.0, 1.0]"``).
Reason = tuple[str, str]


def short_repr(x: Any, limit: int = 200) -> str:
    """``repr(x)`` with long arrays abridged, cut at ``limit`` characters."""
    with np.printoptions(threshold=20, edgeitems=3):
        text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def described(x: Any) -> str:
    """``x`` for "is ...": a scalar with its type, an array by shape and dtype, else the type."""
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    name = type_name(x)
    article = "an" if name[0] in "aeiou" else "a"
    if isinstance(x, (bool, int, float, complex, str, bytes, np.generic)):
        return f"{short_repr(x, 40)} ({article} {name})"
    return f"{article} {name}"


@singledispatch
def why_not_in(space: Space[Any], x: Any) -> Reason | None:
    """Where and why ``x`` is not in ``space``; None when nothing is found to fail.

    Only for messages: call it once ``space.contains(x)`` is False.
    """
    return None if space.contains(x) else ("", f"is not in {space!r}")


def _index(flat: int, shape: tuple[int, ...]) -> str:
    """``"[i, j]"`` for entry ``flat`` of an array of ``shape`` (``""`` for a 0-d one)."""
    if not shape:
        return ""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _as_array(x: Any) -> NDArray[Any] | None:
    """``x`` as an array of numbers or bools, or None when it is not one."""
    try:
        arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        return None
    return arr if arr.dtype.kind in "biuf" else None


def _not_numbers(x: Any, shape: tuple[int, ...] | None, wanted: str) -> Reason:
    """Why ``x``, which ``_as_array`` refused, is not an array of numbers of ``shape``: its
    dtype when NumPy makes an array of that shape of it (objects, complex numbers, strings),
    else what it is."""
    try:
        raw = np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        raw = None
    if raw is not None and raw.shape == shape:
        return "", f"has dtype {raw.dtype}, expected {wanted}"
    return "", f"is {described(x)}, expected an array of shape {shape}"


def _first_outside(
    arr: NDArray[Any], inside: NDArray[np.bool_], low: Any, high: Any, dt: np.dtype[Any]
) -> Reason | None:
    """The first entry of ``arr`` where ``inside`` is False, with its bounds."""
    flat = inside.reshape(-1)
    if bool(flat.all()):
        return None
    k = int(np.argmin(flat))
    value = arr.reshape(-1)[k]
    where = _index(k, arr.shape)
    if arr.dtype.kind == "f" and np.isnan(value):
        return where, "is NaN"
    lo = format_scalar(np.broadcast_to(low, arr.shape).reshape(-1)[k], dt)
    hi = format_scalar(np.broadcast_to(high, arr.shape).reshape(-1)[k], dt)
    return where, f"is {value}, outside [{lo}, {hi}]"


def _array_shape_and_dtype(
    space: Space[Any], x: Any, kinds: str, wanted: str
) -> tuple[NDArray[Any] | None, Reason | None]:
    """``x`` as an array of the space's shape with a dtype of ``kinds``, or the reason not."""
    arr = _as_array(x)
    if arr is None:
        return None, _not_numbers(x, space.shape, wanted)
    if arr.shape != space.shape:
        return None, ("", f"has shape {arr.shape}, expected {space.shape}")
    if arr.dtype.kind not in kinds:
        return None, ("", f"has dtype {arr.dtype}, expected {wanted}")
    return arr, None


@why_not_in.register(Box)
def _box(space: Box, x: Any) -> Reason | None:
    dt = space.dtype
    stored = space._compared(x)  # as contains() compares x with the bounds
    if stored is None:
        arr = _as_array(x)
        if arr is None:
            return _not_numbers(x, space.shape, f"a dtype that casts to {dt} (same kind)")
        if arr.shape != space.shape:
            return "", f"has shape {arr.shape}, expected {space.shape}"
        return "", f"has dtype {arr.dtype}, which does not cast to {dt} (same kind)"
    # Python ints judged by value are shown as they are; other values as given, before a cast
    shown = stored if space._by_value(x) else np.asarray(x)
    inside = (stored >= space.low) & (stored <= space.high)
    return _first_outside(shown, inside, space.low, space.high, dt)


@why_not_in.register(Discrete)
def _discrete(space: Discrete, x: Any) -> Reason | None:
    if isinstance(x, (bool, np.bool_)) or not (
        isinstance(x, (int, np.integer))
        or (isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu")
    ):
        return "", f"is {described(x)}, expected an int"
    value = int(x)
    if space.start <= value < space.start + space.n:
        return None
    return "", f"is {value}, outside [{space.start}, {space.start + space.n - 1}]"


@why_not_in.register(MultiDiscrete)
def _multi_discrete(space: MultiDiscrete, x: Any) -> Reason | None:
    arr, reason = _array_shape_and_dtype(space, x, "iu", "integers")
    if arr is None:
        return reason
    end = space.start + space.nvec - 1
    return _first_outside(arr, (arr >= space.start) & (arr <= end), space.start, end, end.dtype)


@why_not_in.register(MultiBinary)
def _multi_binary(space: MultiBinary, x: Any) -> Reason | None:
    arr, reason = _array_shape_and_dtype(space, x, "iub", "integers or bools")
    if arr is None:
        return reason
    flat = ((arr == 0) | (arr == 1)).reshape(-1)
    if bool(flat.all()):
        return None
    k = int(np.argmin(flat))
    return _index(k, arr.shape), f"is {arr.reshape(-1)[k]}, expected 0 or 1"


def _keys(space: Dict, x: Any) -> Reason | None:
    """The reason ``x`` is not a mapping with exactly the keys of ``space``."""
    if not isinstance(x, cabc.Mapping):
        return "", f"is {described(x)}, expected a dict with keys {list(space.keys())}"
    for key in space:
        if key not in x:
            return "", f"has no key {key!r}"
    for key in x:
        if key not in space.spaces:
            return "", f"has a key {key!r} that the space does not have"
    return None


@why_not_in.register(Dict)
def _dict(space: Dict, x: Any) -> Reason | None:
    reason = _keys(space, x)
    if reason is not None:
        return reason
    for key, child in space.items():
        inner = why_not_in(child, x[key])
        if inner is not None:
            return f"[{key!r}]{inner[0]}", inner[1]
    return None


@why_not_in.register(MaskedBox)
def _masked_box(space: MaskedBox, x: Any) -> Reason | None:
    reason = _keys(space, x)
    if reason is None:
        reason = _prefixed("['mask']", why_not_in(space["mask"], x["mask"]))
    if reason is not None:
        return reason
    box = space["values"]
    assert isinstance(box, Box)
    stored = box._compared(x["values"])  # as MaskedBox.contains() compares the values
    if stored is None:
        return _prefixed("['values']", why_not_in(box, x["values"]))
    values = stored if box._by_value(x["values"]) else np.asarray(x["values"])
    full = np.asarray(x["mask"]) == 1
    inside = (stored >= box.low) & (stored <= box.high)
    inside[~full] = True  # empty slots: their own rule below
    reason = _first_outside(values, inside, box.low, box.high, box.dtype)
    if reason is not None:
        return f"['values']{reason[0]}", f"{reason[1]} (an occupied slot)"
    for slot in np.flatnonzero(~full):
        if not bool((stored[slot] == space.fill_value).all()):
            return (
                f"['values'][{slot}]",
                f"is {short_repr(values[slot], 60)} in an empty slot (mask 0), expected the "
                f"fill value {short_repr(space.fill_value, 60)}",
            )
    return None


@why_not_in.register(Tuple)
def _tuple(space: Tuple, x: Any) -> Reason | None:
    if not isinstance(x, (tuple, list)):
        return "", f"is {described(x)}, expected a tuple of {len(space)} items"
    if len(x) != len(space):
        return "", f"has {len(x)} items, expected {len(space)}"
    for i, (child, part) in enumerate(zip(space.spaces, x)):
        inner = why_not_in(child, part)
        if inner is not None:
            return f"[{i}]{inner[0]}", inner[1]
    return None


def _prefixed(path: str, reason: Reason | None) -> Reason | None:
    return None if reason is None else (path + reason[0], reason[1])
