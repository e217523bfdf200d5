"""Stacking samples of the basic spaces: concatenate and create_empty_array.

The dispatchers live below ``sekai.spaces.sequence`` (which stacks its elements with them);
``sekai.spaces.batch`` registers the Sequence cases and re-exports both.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
from collections.abc import Callable, Mapping, Sequence
from functools import singledispatch
from typing import Any

import numpy as np

from sekai.spaces._bounds import exact_ints
from sekai.spaces._explain import described, short_repr
from sekai.spaces._kinds import ARRAY_SPACES
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["concatenate", "create_empty_array", "refuse_out"]

# -- concatenate ---------------------------------------------------------------------------


@singledispatch
def concatenate(space: Space[Any], items: Any, out: Any = None) -> Any:
    """Stack per-env samples of the single ``space`` into one batch (into ``out`` if given).

    Arrays take the space's dtype; Dict/Tuple recurse; a Sequence gives a tuple; unknown
    spaces give a plain list. With ``out`` (a buffer from ``create_empty_array``) the batch is
    written into it and ``out`` is returned; a Sequence's batch is always a new tuple (a Dict
    buffer takes it as its part, a Tuple holding one is returned as a new tuple of ``out``'s
    parts).

    Raises:
        ValueError: an item does not fit the space: an array of another shape, a Dict item
            without exactly the space's keys, a Tuple item with another number of parts, or
            an item that would change under the cast to an integer dtype (out of the dtype's
            range, fractional or NaN).
        ValueError: ``items`` is empty (a batch of none is ``create_empty_array(space, 0)``).
        ValueError: a Tuple ``out`` with another number of parts than the space, or an array
            of ``out`` whose shape is not the ``(len(items), *shape)`` of its sub-space
            (named by its path, ``out['pos']``).
        TypeError: ``out`` is given for an unknown space (its batch is a new list).
    """
    refuse_out(space, out, "list")
    return list(items)


def refuse_out(space: Space[Any], out: Any, batch: str) -> None:
    """Raise if ``out`` is given for ``space``, whose batch is a new ``batch`` (no buffer)."""
    if out is not None:
        raise TypeError(
            f"concatenate cannot write a batch of {space!r} into out: its batch is a new "
            f"{batch} of the items, not a buffer; call it without out (got "
            f"{type(out).__name__})."
        )


@concatenate.register(Box)
@concatenate.register(Discrete)
@concatenate.register(MultiDiscrete)
@concatenate.register(MultiBinary)
def _concatenate_array(space: Space[Any], items: Any, out: Any = None) -> Any:
    if not isinstance(items, (list, tuple)):
        items = list(items)  # np.stack needs a sequence, not a generator
    dt = space.dtype if out is None else out.dtype
    assert dt is not None  # every array space has a dtype
    try:
        stacked = items
        own = _array_dtype(items)
        if own is None or own.kind not in "biuf":  # lists, scalars, strings, objects, ...
            stacked = _checked(space, items, dt)
        elif own != dt and dt.kind in "iu":  # arrays of one real dtype: one stacked check
            _check_stack_keeps(space, items, dt)
        if out is None:
            batch = _new_batch(stacked, dt, own is not None)
        else:
            batch = np.stack(stacked, axis=0, out=out, casting="unsafe")
    except ValueError:  # NumPy's "all input arrays must have the same shape" and the like
        _raise_named(space, items, out)
        _check_shapes(space, items)
        raise
    if batch.shape[1:] != space.shape:  # items of one shape, but not the space's
        _check_shapes(space, items)
    return batch


def _new_batch(items: Sequence[Any], dt: np.dtype[Any], arrays: bool) -> Any:
    """``np.stack(items, axis=0, dtype=dt, casting="unsafe")``. ``arrays`` of one real dtype
    (the common case) are stacked by ``np.array``, several times as fast on small ones, with
    an identical result; if their shapes differ, ``np.stack`` raises its own error."""
    if arrays:
        try:
            return np.array(items, dtype=dt)
        except ValueError:  # arrays of different shapes
            pass
    return np.stack(items, axis=0, dtype=dt, casting="unsafe")


def _array_dtype(items: Sequence[Any]) -> np.dtype[Any] | None:
    """The dtype of ``items`` if they are all arrays of one dtype, or all NumPy scalars of one
    type (``np.int64(2)`` for a Discrete), else None."""
    if not items:
        return None
    first = items[0]
    kind = type(first)
    if kind is not np.ndarray and not isinstance(first, np.generic):
        return None
    own: np.dtype[Any] = first.dtype
    for item in items:  # a loop: twice as fast as all() on a few items
        if type(item) is not kind or item.dtype != own:
            return None
    return own


def _check_stack_keeps(space: Space[Any], items: Sequence[Any], dt: np.dtype[Any]) -> None:
    """Raise unless casting ``items``, arrays of one real dtype, to the integer dtype ``dt``
    keeps every value: one check of their stack, not one per item (batching is on every
    vector step)."""
    original = _new_batch(items, items[0].dtype, True)
    changed = _changes(original, dt)
    if changed is not None and bool(changed.any()):
        i = int(np.argmax(changed.reshape(len(items), -1).any(axis=1)))
        raise _changed(space, i, items[i], dt)


def _changes(arr: np.ndarray[Any, Any], dt: np.dtype[Any]) -> Any:
    """Where casting the real array ``arr`` to the integer dtype ``dt`` changes a value (a
    boolean array), or None if the cast is safe."""
    if np.can_cast(arr.dtype, dt, "safe"):
        return None
    with np.errstate(invalid="ignore"):  # NaN and inf: reported by the caller, not warned about
        return arr != arr.astype(dt)


def _checked(space: Space[Any], items: Sequence[Any], dt: np.dtype[Any]) -> Sequence[Any]:
    """``items`` to stack as ``dt``, once each is known to be real numbers (not strings,
    None, complex numbers or objects) that the cast to an integer ``dt`` keeps: an integer
    cast wraps 300 to 44 in uint8 and truncates 1.9 to 1, making valid-looking values of ones
    that are no member. Lists and tuples come back as arrays, their Python ints exact
    (``exact_ints`` where NumPy would round ints on both sides of 2**63 to float64).

    Raises:
        ValueError: an item is not real numbers, or the cast would change its values.
    """
    copied: list[Any] | None = None  # items with arrays for lists, once one is read
    integer = dt.kind in "iu"
    low, high = _range(dt) if integer else (0, 0)
    for i, item in enumerate(items):
        if type(item) is int:  # compared exactly
            if integer and not low <= item <= high:
                raise _changed(space, i, item, dt)
            continue
        if type(item) is float and not integer:
            continue
        arr = item
        if not isinstance(item, (np.ndarray, np.generic)):  # read as NumPy reads it
            arr = np.asarray(item)
            if integer and arr.dtype.kind in "fO":
                ints = exact_ints(item)
                if ints is not None:
                    if ints.size and not low <= int(ints.min()) <= int(ints.max()) <= high:
                        raise _changed(space, i, item, dt)
                    arr = ints.astype(dt)
            if copied is None:
                copied = list(items)
            copied[i] = arr
        if arr.dtype == dt:
            continue
        if arr.dtype.kind not in "biuf":
            raise ValueError(
                f"items[{i}] = {item!r} is not a member of {space!r}: it holds {arr.dtype} "
                f"values, not real numbers to stack as {dt}."
            )
        changed = _changes(arr, dt) if integer else None
        if changed is not None and bool(changed.any()):
            raise _changed(space, i, item, dt)
    return items if copied is None else copied


@functools.cache
def _range(dt: np.dtype[Any]) -> tuple[int, int]:
    """The least and the greatest value of the integer dtype ``dt``."""
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _changed(space: Space[Any], i: int, item: Any, dt: np.dtype[Any]) -> ValueError:
    values = "value" if np.ndim(item) == 0 else "values"
    return ValueError(
        f"items[{i}] = {item!r} is not a member of {space!r}: stacking it as {dt} would "
        f"change its {values}."
    )


def _raise_named(space: Space[Any], items: Sequence[Any], out: Any) -> None:
    """After a failed stack of ``items`` of ``space`` (into ``out``), raise naming what
    NumPy's error does not: that ``items`` is empty, or the part of ``out`` whose shape is not
    the one ``len(items)`` samples need. Checked only then: batching is on every vector step.
    """
    if not items:
        raise ValueError(
            f"items is empty: concatenate needs at least one sample of {space!r} to stack "
            "(create_empty_array(space, 0) is a batch of none)."
        ) from None
    if out is not None:
        _check_out(space, out, len(items), "out")


def _check_out(space: Space[Any], out: Any, n: int, path: str) -> None:
    """Raise naming the first array of the buffer ``out`` (at ``path``) whose shape is not
    ``(n, *shape)`` of its sub-space; parts of another structure are left to their errors."""
    if isinstance(space, ARRAY_SPACES):
        expected = (n, *tuple(space.shape or ()))
        found = getattr(out, "shape", None)
        if found is not None and tuple(found) != expected:
            raise ValueError(
                f"{path} has shape {tuple(found)}, expected {expected} for {n} items of "
                f"{space!r}: pass a buffer from create_empty_array(space, {n})."
            ) from None
    elif isinstance(space, Dict) and isinstance(out, Mapping):
        for key, child in space.items():
            if key in out:
                _check_out(child, out[key], n, f"{path}[{key!r}]")
    elif isinstance(space, Tuple) and isinstance(out, cabc.Sequence):
        for i, (child, part) in enumerate(zip(space.spaces, out)):
            _check_out(child, part, n, f"{path}[{i}]")


def _check_shapes(space: Space[Any], items: Sequence[Any]) -> None:
    """Raise naming the first of ``items`` whose shape is not ``space.shape`` (np.stack would
    make a batch of another shape out of it, or fail with a message naming no item)."""
    shape = tuple(space.shape or ())
    for i, item in enumerate(items):
        try:
            found = np.shape(item)
        except ValueError:  # a ragged list
            found = None
        if found != shape:
            what = "ragged" if found is None else f"of shape {found}"
            raise ValueError(
                f"items[{i}] = {short_repr(item, 80)} is not a member of {space!r}: it is "
                f"{what}, the space's shape is {shape}."
            )


@concatenate.register(Dict)
def _concatenate_dict(space: Dict, items: Any, out: Any = None) -> dict[Any, Any]:
    items = list(items)
    size = len(space)
    try:
        for item in items:
            if len(item) != size:
                raise KeyError  # a key missing or one too many: named below
        columns = {key: [item[key] for item in items] for key in space}
    except (KeyError, TypeError):  # checked only on failure: batching is on every vector step
        _check_parts(space, items)
        raise
    try:
        if out is None:
            return {key: concatenate(child, columns[key]) for key, child in space.items()}
        for key, child in space.items():
            out[key] = concatenate(child, columns[key], out[key])
    except ValueError:  # named from here, with the path of the part of out
        _raise_named(space, items, out)
        raise
    return out  # type: ignore[no-any-return]


@concatenate.register(Tuple)
def _concatenate_tuple(space: Tuple, items: Any, out: Any = None) -> tuple[Any, ...]:
    items = list(items)
    children = space.spaces
    try:
        for item in items:
            if len(item) != len(children):
                raise IndexError  # named below
        columns = [[item[i] for item in items] for i in range(len(children))]
    except (IndexError, KeyError, TypeError):
        _check_parts(space, items)
        raise
    if out is not None and len(out) != len(children):
        raise ValueError(
            f"out has {len(out)} parts, but {space!r} has {len(children)} sub-spaces: pass a "
            "buffer from create_empty_array(space, n)."
        )
    try:
        if out is None:
            return tuple(concatenate(child, column) for child, column in zip(children, columns))
        parts = tuple(
            concatenate(child, column, part) for child, column, part in zip(children, columns, out)
        )
    except ValueError:  # named from here, with the path of the part of out
        _raise_named(space, items, out)
        raise
    # Written in place; a part whose batch is new (a Sequence's tuple) needs a new Tuple.
    return out if all(a is b for a, b in zip(parts, out)) else parts


def _check_parts(space: Dict | Tuple, items: list[Any]) -> None:
    """Raise naming the first of ``items`` that is not a dict with exactly the keys of the
    Dict ``space`` or a sequence with one part per sub-space of the Tuple ``space``."""
    for i, item in enumerate(items):
        if isinstance(space, Dict):
            if not isinstance(item, Mapping):
                why = f"is {described(item)}, not a dict with the keys of {space!r}"
            elif missing := [key for key in space if key not in item]:
                why = f"has no key {missing[0]!r} of {space!r}"
            elif extra := [key for key in item if key not in space.spaces]:
                why = f"has the key {extra[0]!r}, which {space!r} does not have"
            else:
                continue
        elif not isinstance(item, cabc.Sized) or isinstance(item, Mapping):
            why = f"is {described(item)}, not a tuple with one part per sub-space of {space!r}"
        elif len(item) != len(space):
            why = f"has {len(item)} parts, but {space!r} has {len(space)} sub-spaces"
        else:
            continue
        raise ValueError(f"items[{i}] {why}.")


# -- create_empty_array --------------------------------------------------------------------


def check_count(n: Any, minimum: int, accepted: str = "an int", purpose: str = "") -> int:
    """``n`` samples as an int >= ``minimum`` (``int()`` would take 2.9, "3" and True)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be {accepted}, got {type(n).__name__} {n!r}.")
    if n < minimum:
        raise ValueError(f"n must be >= {minimum}{purpose}, got {n}.")
    return int(n)


def _rows(n: Any) -> int:
    """``create_empty_array``'s ``n``: 0 is an empty buffer (None is taken by the caller)."""
    return check_count(n, 0, "an int or None")


@singledispatch
def create_empty_array(
    space: Space[Any], n: int | None = 1, fn: Callable[..., Any] = np.zeros
) -> Any:
    """Allocate a buffer shaped like ``concatenate``'s output for ``n`` samples of ``space``.

    ``n=None`` gives the shape of one unbatched sample. It allocates; it does not build members.

    Raises:
        NotImplementedError: no implementation is registered for the space's type.
    """
    raise NotImplementedError(f"create_empty_array not implemented for {type(space).__name__}")


@create_empty_array.register(Box)
@create_empty_array.register(Discrete)
@create_empty_array.register(MultiDiscrete)
@create_empty_array.register(MultiBinary)
def _empty_array(space: Any, n: int | None = 1, fn: Callable[..., Any] = np.zeros) -> Any:
    shape = tuple(space.shape) if n is None else (_rows(n), *space.shape)
    return fn(shape, dtype=space.dtype)


@create_empty_array.register(Dict)
def _empty_dict(
    space: Dict, n: int | None = 1, fn: Callable[..., Any] = np.zeros
) -> dict[Any, Any]:
    return {key: create_empty_array(child, n, fn) for key, child in space.items()}


@create_empty_array.register(Tuple)
def _empty_tuple(
    space: Tuple, n: int | None = 1, fn: Callable[..., Any] = np.zeros
) -> tuple[Any, ...]:
    return tuple(create_empty_array(child, n, fn) for child in space.spaces)
