"""The envs' rule for Box actions: real numbers of the space's shape, every entry finite.

Bools count as the real numbers 0 and 1: core.md §1 makes an action outside a Box only by a
wrong shape or a non-finite entry, and ``Box.contains`` takes every dtype that
``np.can_cast(..., "same_kind")`` allows, bool among them. Envs get them as floats, and a
vector env's sub-envs get those of an integer Box as its integers (``bools_as_numbers``).

One rule, three entry points: ``box_action`` for one action (envs, and through
``checked_action``, the check of an action of any space, ``DelayAction`` and ``StickyAction``),
``finite_float32_entry`` its fast path for the 1-element float32 actions the one-dimensional
continuous envs are mostly given, and ``bad_box_rows`` for a batch whose shape is already
checked (the vector action checks); ``real_array`` is the rule without the finiteness check,
for ``ClipAction``, which clips infinities into the bounds. Values beyond the bounds pass: envs
clip them. First-party plugins import this module (they pin
sekai-core to the same minor version), so its names stay as they are within a minor version.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import isfinite
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.error import InvalidAction
from sekai.spaces import Box, Dict, Tuple

__all__ = [
    "DOUBLES",
    "bad_box_rows",
    "bools_as_floats",
    "bools_as_numbers",
    "box_action",
    "checked_action",
    "finite_float32_entry",
    "real_array",
]

# Bools, integers and floats; complex, strings and objects (ints too large for int64/uint64)
# are refused.
_REAL = "biuf"
_ndarray = np.ndarray
# Floats whose tolist() gives Python floats of the same value (a longdouble's may not fit one).
DOUBLES = frozenset(map(np.dtype, (np.float16, np.float32, np.float64)))
# Up to this many entries, math.isfinite over tolist() beats np.isfinite(...).all(), whose
# ufunc call and Python-level reduction cost about 2 us even on one entry.
_FEW = 16
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def bools_as_numbers(array: npt.NDArray[Any], dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """``array``, or, when it holds bools, its copy as the numbers 1 and 0 for a Box of
    ``dtype``: in that dtype for an integer Box (members of it, as the bools are), float64
    for a float one. An env's arithmetic on bools would not be a number's (``True - True``
    raises)."""
    if array.dtype.kind == "b":
        return array.astype(dtype if dtype.kind in "iu" else _F64)
    return array


def bools_as_floats(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``array``, or its float64 copy when it holds bools: the 0.0 and 1.0 NumPy computes with
    (``bools_as_numbers`` for a float Box)."""
    return bools_as_numbers(array, _F64)


def box_action(action: Any, space: Any, shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """``action`` as an array of ``shape`` of real, finite numbers, its dtype kept (bools
    become float64, ``bools_as_floats``).

    The dtype is kept so that an env computes as gymnasium does for the same action.

    Raises:
        InvalidAction: ``action`` is not an array-like of real numbers of ``shape``, or has a
            NaN or infinite entry.
    """
    array = action if type(action) is _ndarray else _converted(action, space)
    if array.shape != shape:
        raise InvalidAction(action, space)
    dtype = array.dtype
    if dtype in DOUBLES and array.ndim == 1 and len(array) <= _FEW:
        if not all(map(isfinite, array.tolist())):
            raise InvalidAction(action, space)
    elif dtype.kind not in _REAL or (dtype.kind == "f" and not np.isfinite(array).all()):
        raise InvalidAction(action, space)
    return bools_as_floats(array)


def checked_action(action: Any, space: Any) -> None:
    """Refuse ``action`` as the envs of ``space`` do, for a wrapper that acts on it before its
    env sees it: ``box_action`` for a Box (values beyond the bounds pass; envs clip them), the
    same for each Box of a Dict or Tuple, ``space.contains`` for every other space.

    Raises:
        InvalidAction: the env would refuse ``action``.
    """
    if isinstance(space, Box):
        box_action(action, space, space.shape)
    elif not space.contains(action) and not _takes(action, space):
        raise InvalidAction(action, space)


def _takes(action: Any, space: Any) -> bool:
    """Whether a Dict or Tuple ``space``'s env takes ``action`` though ``contains`` refuses it:
    a Box part of the right shape, finite, beyond its bounds (``box_action``)."""
    if isinstance(space, Box):
        try:
            box_action(action, space, space.shape)
        except InvalidAction:
            return False
        return True
    if isinstance(space, Dict):
        return (
            isinstance(action, Mapping)
            and action.keys() == space.spaces.keys()
            and all(_takes(action[key], part) for key, part in space.spaces.items())
        )
    if isinstance(space, Tuple):
        return (
            isinstance(action, (tuple, list))
            and len(action) == len(space.spaces)
            and all(_takes(value, part) for value, part in zip(action, space.spaces))
        )
    return bool(space.contains(action))


def real_array(action: Any, space: Any, shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """``action`` as an array of ``shape`` of real numbers (bools, integers, floats), its dtype
    kept: ``box_action`` without the finiteness check, for a wrapper that clips infinities.

    Raises:
        InvalidAction: ``action`` is not an array-like of real numbers of ``shape``.
    """
    array = action if type(action) is _ndarray else _converted(action, space)
    if array.shape != shape or array.dtype.kind not in _REAL:
        raise InvalidAction(action, space)
    return array


def _converted(action: Any, space: Any) -> npt.NDArray[Any]:
    """``np.asarray(action)``; what NumPy refuses (a ragged list) is an invalid action."""
    try:
        return np.asarray(action)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidAction(action, space) from exc


def finite_float32_entry(action: Any) -> np.float32 | None:
    """The entry of ``action`` when it is a finite 1-element float32 array (what a float32
    ``Box(shape=(1,))`` samples), else None: the caller then checks it with ``box_action``.

    A third of the cost of ``box_action``, which is a tenth of a MountainCarContinuous step.
    """
    if type(action) is _ndarray and action.dtype is _F32 and action.shape == (1,):
        entry: np.float32 = action[0]
        if isfinite(entry):
            return entry
    return None


def bad_box_rows(batch: npt.NDArray[Any]) -> npt.NDArray[np.bool_] | None:
    """The rows (first axis) of a batch of Box actions that break the rule, or None when none
    does (one ``isfinite`` for floats, nothing for bools and integers)."""
    kind = batch.dtype.kind
    if kind in "biu":
        return None
    if kind != "f":
        return np.ones(len(batch), dtype=bool)
    finite = np.isfinite(batch)
    if finite.all():
        return None
    rows: npt.NDArray[np.bool_] = ~finite.reshape(len(batch), -1).all(axis=1)
    return rows
