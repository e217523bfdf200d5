"""Structural equality of observations (arrays, dicts, tuples), NaN-equal."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

_NUMERIC = "biufc"

# Field metadata of a dataclass field that holds a wall-clock reading (EpisodeStats' times):
# two runs of the same seeded episode differ there and nowhere else.
WALL_CLOCK: Mapping[str, bool] = MappingProxyType({"sekai_wall_clock": True})


@dataclasses.dataclass(frozen=True)
class _IdentityOnly:
    """What replaces a value that compares only by identity: equal to another of its type."""

    type: type


def _compares_by_identity(value: object) -> bool:
    eq: object = type(value).__eq__
    return eq is object.__eq__


def without_wall_clock(value: Any) -> Any:
    """``value`` as two runs of one seeded episode must agree on it, at any depth of dicts,
    lists, tuples and dataclasses: every dataclass field marked ``WALL_CLOCK`` and the ``t`` of
    gymnasium's episode statistics (an ``"episode"`` mapping of exactly ``r``, ``l``, ``t``)
    set to 0.0, and every value that compares only by identity (its type keeps
    ``object.__eq__``: a plain record, a Generator, a function, an env) replaced by a
    placeholder naming its type, since two runs never return the same such object."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if _compares_by_identity(value):
            return _IdentityOnly(type(value))
        clock = {
            f.name: 0.0 for f in dataclasses.fields(value) if f.metadata.get("sekai_wall_clock")
        }
        return dataclasses.replace(value, **clock) if clock else value
    if isinstance(value, Mapping):
        masked = {key: without_wall_clock(item) for key, item in value.items()}
        episode = value.get("episode")
        if isinstance(episode, Mapping) and episode.keys() == {"r", "l", "t"}:
            masked["episode"] = {**masked["episode"], "t": 0.0}
        return masked
    if type(value) in (list, tuple):
        return type(value)(without_wall_clock(item) for item in value)
    if value is not None and not isinstance(value, type) and _compares_by_identity(value):
        return _IdentityOnly(type(value))
    return value


def structurally_equal(a: Any, b: Any) -> bool:
    """Compare nested observations: arrays element-wise (NaN equals NaN), containers recursively."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            x, y = np.asarray(a), np.asarray(b)
        except Exception:
            return False
        if x.shape != y.shape:
            return False
        if x.dtype.kind == "O" or y.dtype.kind == "O":  # element by element, NaN-equal too
            return all(structurally_equal(p, q) for p, q in zip(x.flat, y.flat))
        if x.dtype.kind in _NUMERIC and y.dtype.kind in _NUMERIC:
            nan_able = x.dtype.kind in "fc" or y.dtype.kind in "fc"
            return bool(np.array_equal(x, y, equal_nan=nan_able))
        try:  # strings, bytes, datetimes, structured: NumPy's own comparison, if any
            return bool(np.array_equal(x, y))
        except Exception:
            return False
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(structurally_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(structurally_equal(x, y) for x, y in zip(a, b))
        )
    # NumPy float scalars too: np.float32/np.float16 are not Python floats (np.float64 is).
    if (
        isinstance(a, (float, np.floating))
        and isinstance(b, (float, np.floating))
        and a != a
        and b != b
    ):
        return True
    try:
        return bool(a == b)
    except Exception:
        return False
