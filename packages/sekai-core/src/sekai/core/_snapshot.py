"""Snapshots of observations and infos: every array and container copied, so a later write into
a reused buffer or dict cannot change them."""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, MutableMapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from sekai.core.result import ResetResult, StepResult

__all__ = ["snapshot", "snapshot_info", "snapshot_infos"]


# Values an observation or info may hold as they are: no one can change them in place (NumPy's
# structured scalars, np.void, are views that can be written, so they are not among them).
_IMMUTABLE = frozenset(
    {int, float, bool, complex, str, bytes, type(None)}
    | {t for t in set(np.sctypeDict.values()) if issubclass(t, np.generic) and t is not np.void}
)
_ARRAYS = (np.ndarray, np.void)
_M = TypeVar("_M", bound=MutableMapping[Any, Any])
_VALUES = dict.values
_NOTHING: dict[str, Any] = {}  # stands in for an info left out of the check (never handed out)


def snapshot(obs: Any) -> Any:
    """``obs`` with every array and container in it copied, their classes kept (``_copied``):
    a terminal observation kept across the reset that follows it, in case the env writes the
    reset observation into the same buffer."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if type(obs) in _IMMUTABLE:
        return obs
    return _copied(obs, {})


def snapshot_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A new plain dict of ``info`` that shares nothing mutable with it (``_copied``), as a
    ProcVecEnv's pickled infos share nothing: an env that refills its info dict, or the dicts
    and arrays in it, in place does not change the infos already handed out.

    An info of numbers, strings and None only (the usual one) costs one type check of its
    values, in C, and one ``dict()``.
    """
    if _IMMUTABLE.issuperset(map(type, info.values())):
        return dict(info)
    return _items_copied(info, {})


def snapshot_infos(
    results: Sequence[ResetResult[Any] | StepResult[Any]], built: Collection[int] = ()
) -> list[dict[str, Any]]:
    """``snapshot_info`` of the info of each of ``results``, one call's results from every
    sub-env, whose infos are plain dicts; but the infos at the indices ``built`` (sekai's own
    dicts of snapshots, an autoreset's) are handed on as they are. When the others hold only
    numbers, strings and None: one ``dict.copy()`` each and one type check of all values."""
    # Copied as they are read, and checked as copies: the cheapest spelling measured in CPython
    # 3.11 (dict.values as a constant) on the path every sync/async step takes.
    copies = [result.info.copy() for result in results]
    for index in built:
        copies[index] = _NOTHING
    if not _IMMUTABLE.issuperset(map(type, chain.from_iterable(map(_VALUES, copies)))):
        copies = [  # from the originals: a cycle back to an info must find its copy
            shallow if shallow is _NOTHING else _items_copied(result.info, {})
            for shallow, result in zip(copies, results)
        ]
    for index in built:
        copies[index] = results[index].info
    return copies


def _items_copied(source: Mapping[Any, Any], into: _M, memo: dict[int, Any] | None = None) -> _M:
    """``into`` (the copy of ``source``) with every item of ``source`` set: numbers, strings
    and None as they are, an array copied here, other values by ``_copied``. ``into`` is in
    ``memo`` before any item is copied, so that a cycle back to ``source`` finds it (without
    ``memo``, one is made at the first value that is not a number, string or None)."""
    if memo is not None:
        memo[id(source)] = into
    immutable, ndarray = _IMMUTABLE, np.ndarray
    for key, value in source.items():
        kind = type(value)
        if kind in immutable:
            into[key] = value
            continue
        if memo is None:
            memo = {id(source): into}
        if kind is ndarray and id(value) not in memo:  # the usual array, copied here
            into[key] = memo[id(value)] = value.copy()
        else:
            into[key] = _copied(value, memo)
    return into


def _copied(value: Any, memo: dict[int, Any]) -> Any:
    """``value`` with every array (and ``np.void`` record), dict, list, tuple and namedtuple in
    it copied, as pickling copies them: their classes kept (a masked array, a defaultdict, an
    OrderedDict, a list subclass, a namedtuple rebuilt with ``_make``), and an object reached
    twice, or through a cycle, copied once (``memo``: id of the original -> its copy). Other
    objects (an ``EpisodeStats``, a user's class, other tuple subclasses) are kept as they are.
    """
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if kind is dict:
        return _items_copied(value, {}, memo)
    if kind is np.ndarray or isinstance(value, _ARRAYS):
        done = memo[id(value)] = value.copy()
        return done
    if isinstance(value, dict):  # a subclass (defaultdict, OrderedDict) keeps its settings
        return _items_copied(value, copy.copy(value), memo)
    immutable = _IMMUTABLE
    if isinstance(value, list):
        done = memo[id(value)] = [] if kind is list else copy.copy(value)
        done[:] = [item if type(item) in immutable else _copied(item, memo) for item in value]
        return done
    if kind is tuple or (isinstance(value, tuple) and hasattr(kind, "_fields")):
        items = [item if type(item) in immutable else _copied(item, memo) for item in value]
        done = memo.get(id(value))  # the tuple was reached again through a cycle in its items
        if done is None:
            done = memo[id(value)] = tuple(items) if kind is tuple else kind._make(items)
        return done
    return value
