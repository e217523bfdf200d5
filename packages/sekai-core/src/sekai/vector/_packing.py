"""Column packing of per-sub-env results for the trip between processes (ProcVecEnv).

A worker's reply holds one ``(reward, terminated, truncated, info[, observation])`` tuple per
sub-env. Pickled as they are, the many small dicts and arrays cost more than the sub-envs'
steps themselves; packed column by column, same-shaped arrays travel as one stacked array
and same-keyed dicts as one dict of columns. ``unpack(pack(values))`` gives values equal to
``values`` in type, dtype, shape, layout and key order, as pickling each would.

A column that holds only plain data (builtin scalars, strings and numeric NumPy values, in
lists, tuples and dicts) can be ``defer()``red: pickled on its own, it travels as bytes (never a
column's own form: ``pack`` gives a list or a ``Packed``), ``received()`` wraps it in a
``Deferred``, and ``unpack`` unpickles it when first read, so a parent that never reads the
infos of a step never pays for them. Anything else is unpickled with the reply, so a value the
parent cannot unpickle (a class only the worker has) still fails the call that received it.
"""

from __future__ import annotations

import pickle
from itertools import chain
from operator import is_
from typing import Any, Final

import numpy as np

__all__ = ["Deferred", "Packed", "defer", "pack", "plain", "received", "unpack"]

# Fewer values than this travel as they are: stacking would save nothing.
_MIN_ROWS: Final = 4


class Packed:
    """One packed column: ``kind`` says how ``data`` holds the values (see ``unpack``)."""

    __slots__ = ("data", "kind")

    ARRAYS: Final = 0  # data: the stacked arrays; rows are the values
    SCALARS: Final = 1  # data: a 1-D array of same-typed numpy scalars
    TUPLES: Final = 2  # data: (length, packed columns), one per tuple position
    DICTS: Final = 3  # data: (keys, packed columns), one per key
    GROUPS: Final = 4  # data: (length, [(indices, packed column), ...]), by dict key order

    def __init__(self, kind: int, data: Any) -> None:
        self.kind = kind
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        return (Packed, (self.kind, self.data))


def pack(values: list[Any]) -> Any:
    """The values as a ``Packed`` column, or the list itself when packing would not help."""
    if len(values) < _MIN_ROWS:
        return values
    first = values[0]
    kind = type(first)
    if any(type(value) is not kind for value in values):
        return values
    if kind is np.ndarray:
        return _pack_arrays(values)
    if kind is tuple:
        return _pack_tuples(values)
    if kind is dict:
        return _pack_dicts(values)
    if issubclass(kind, np.generic):
        return _pack_scalars(values)
    return values


class Deferred:
    """A plain column that arrived pickled on its own; ``load()`` unpickles it (once)."""

    __slots__ = ("_blob", "_column")

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._column: Any = None

    def load(self) -> Any:
        if self._column is None:
            self._column = pickle.loads(self._blob)
        return self._column

    def __reduce__(self) -> tuple[Any, ...]:
        return (Deferred, (self._blob,))


def defer(column: Any) -> Any:
    """``column`` pickled on its own (bytes) when it is ``plain``, else ``column`` itself.

    The bytes travel inside the reply as they are: a class in the reply would cost the parent
    a lookup by name on every reply (more than the rest of a small reply's unpickling).
    """
    try:
        deferrable = plain(column)
    except RecursionError:  # nested too deep (or a list that holds itself): not worth it
        deferrable = False
    if deferrable:
        return pickle.dumps(column, pickle.HIGHEST_PROTOCOL)
    return column


def received(column: Any) -> Any:
    """A column as it arrived: a ``defer()``red one as a ``Deferred``, any other as it is."""
    return Deferred(column) if type(column) is bytes else column


# Exact types: a subclass (an IntEnum, a str subclass) may live only where it was created.
_PLAIN_TYPES: Final = frozenset({type(None), bool, int, float, complex, str, bytes})
_NUMERIC: Final = frozenset("biufcmM")  # NumPy dtype kinds that unpickle anywhere


def plain(column: Any) -> bool:
    """Whether a packed column (or a value in one) unpickles wherever NumPy is installed."""
    kind = type(column)
    if kind in _PLAIN_TYPES:
        return True
    if kind is Packed:
        return plain(column.data)
    if kind is np.ndarray or isinstance(column, np.generic):
        return column.dtype.kind in _NUMERIC and type(column).__module__ == "numpy"
    if kind is list or kind is tuple:  # most often a column of builtin scalars: one pass in C
        return _PLAIN_TYPES.issuperset(map(type, column)) or all(map(plain, column))
    if kind is dict:
        return all(map(plain, column)) and all(map(plain, column.values()))
    return False


def unpack(column: Any) -> list[Any]:
    """The list of values ``pack()`` packed (``defer()``red or not)."""
    if type(column) is Deferred:
        column = column.load()
    if type(column) is not Packed:
        return column  # type: ignore[no-any-return]
    kind, data = column.kind, column.data
    if kind == Packed.ARRAYS or kind == Packed.SCALARS:
        return list(data)
    if kind == Packed.TUPLES:
        length, columns = data
        if not columns:
            return [()] * length
        return list(zip(*map(unpack, columns)))
    if kind == Packed.DICTS:
        keys, columns = data
        return [dict(zip(keys, row)) for row in zip(*map(unpack, columns))]
    length, groups = data
    values: list[Any] = [None] * length
    for indices, group in groups:
        for index, value in zip(indices, unpack(group)):
            values[index] = value
    return values


def _pack_arrays(values: list[np.ndarray]) -> Any:
    first = values[0]
    shape, dtype = first.shape, first.dtype
    if not shape or dtype.hasobject:  # a 0-d array's row would be a scalar
        return values
    for value in values:
        if value.shape != shape or value.dtype != dtype or not value.flags.c_contiguous:
            return values
    return Packed(Packed.ARRAYS, np.stack(values))


def _pack_scalars(values: list[np.generic]) -> Any:
    dtype = values[0].dtype
    if dtype.hasobject or dtype.kind not in "biufcmM":
        return values
    if dtype.kind in "mM" and any(value.dtype != dtype for value in values):
        return values  # datetimes of different units would share the finest one
    return Packed(Packed.SCALARS, np.array(values, dtype=dtype))


def _pack_tuples(values: list[tuple[Any, ...]]) -> Any:
    width = len(values[0])
    if any(len(value) != width for value in values):
        return values
    return Packed(Packed.TUPLES, (len(values), [pack(list(c)) for c in zip(*values)]))


def _pack_dicts(values: list[dict[Any, Any]]) -> Any:
    keys = tuple(values[0])
    # The usual case, fast: every row's keys are the very objects of the first row's, in order
    # (string literals are), so one group whose keys pickle alike. (Keys in all rows summing to
    # len(values) rows of the first's, matching its keys repeated, are exactly those: a row
    # longer than the first would repeat a key.)
    if sum(map(len, values)) == len(keys) * len(values) and all(
        map(is_, keys * len(values), chain.from_iterable(values))
    ):
        return _same_keys(keys, values)
    # A row is rebuilt with its group's first keys, so a group's keys must be equal in type too
    # (1, True, 1.0 and np.int64(1) are one dict key): one pass over every key finds their types.
    types = set(map(type, chain.from_iterable(values)))
    if not types <= _EXACT_KEYS and not all(map(_exact_key, types)):
        return values  # e.g. 0.0 and -0.0, or (1,) and (True,): equal, yet pickled apart
    group = tuple if len(types) <= 1 else _typed_keys
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, value in enumerate(values):
        groups.setdefault(group(value), []).append(index)
    if len(groups) == 1:
        return _same_keys(tuple(values[0]), values)
    packed = [
        (indices, _same_keys(tuple(values[indices[0]]), [values[i] for i in indices]))
        for indices in groups.values()
    ]
    return Packed(Packed.GROUPS, (len(values), packed))


# Key types whose equal keys of one type pickle the same (a str is its characters, an int its
# value); keys of other types (floats, tuples, ...) may be equal and still differ.
_EXACT_KEYS: Final = frozenset({str, int, bool, bytes, type(None)})


def _exact_key(kind: type) -> bool:
    """Whether two equal keys of type ``kind`` pickle the same."""
    return kind in _EXACT_KEYS or (
        issubclass(kind, (np.integer, np.bool_, np.str_, np.bytes_)) and kind.__module__ == "numpy"
    )


def _typed_keys(value: dict[Any, Any]) -> tuple[Any, ...]:
    """The keys of ``value`` and their types (equal keys of other types make other groups)."""
    return (*value, *map(type, value))


def _same_keys(keys: tuple[Any, ...], values: list[dict[Any, Any]]) -> Any:
    if len(values) < _MIN_ROWS or not keys:  # no keys: no column would give the length
        return values
    columns = [pack([value[key] for value in values]) for key in keys]
    return Packed(Packed.DICTS, (keys, columns))
