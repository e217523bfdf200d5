"""Snapshots of observations and infos: every array and container copied, so a later write into
a reused buffer or dict cannot change them."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["snapshot", "snapshot_info"]


def snapshot(obs: Any) -> Any:
    """``obs`` with every ndarray in it copied: a terminal observation kept across the reset
    that follows it, in case the env writes the reset observation into the same buffer."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if isinstance(obs, dict):
        return {key: snapshot(value) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(snapshot(value) for value in obs)
    return obs


# Values an info may hold as they are: no one can change them in place (NumPy's structured
# scalars, np.void, are views that can be written, so they are not among them).
_IMMUTABLE = frozenset(
    {int, float, bool, complex, str, bytes, type(None)}
    | {t for t in set(np.sctypeDict.values()) if issubclass(t, np.generic) and t is not np.void}
)


def snapshot_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A new plain dict of ``info`` that shares nothing mutable with it: nested dicts and lists
    (tuples' items too) copied recursively, arrays copied; other objects (an ``EpisodeStats``,
    a user's class) are kept as they are. So an env that refills its info dict, or the dicts
    and arrays in it, in place does not change the infos already handed out, as a ProcVecEnv's
    pickled ones are not changed.

    An info of scalars, strings and None only (the usual one) costs one ``dict()``.
    """
    immutable = _IMMUTABLE
    for value in info.values():
        if type(value) not in immutable:
            return {key: _copied(value) for key, value in info.items()}
    return dict(info)


def _copied(value: Any) -> Any:
    """``value`` with every array, dict and list in it copied (``snapshot_info``)."""
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    if kind is np.ndarray:
        return value.copy()
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if kind is tuple:
        return tuple(_copied(item) for item in value)
    if isinstance(value, np.ndarray):  # a subclass (a masked array) keeps its class
        return value.copy()
    if isinstance(value, dict):  # a defaultdict, an OrderedDict: their class and settings kept
        copied = copy.copy(value)
        for key, item in value.items():
            copied[key] = _copied(item)
        return copied
    if isinstance(value, list):
        items = copy.copy(value)
        items[:] = [_copied(item) for item in value]
        return items
    return value
