"""Stacking samples of the basic spaces: concatenate and create_empty_array.

The dispatchers live below ``sekai.spaces.sequence`` (which stacks its elements with them);
``sekai.spaces.batch`` registers the Sequence cases and re-exports both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import singledispatch
from typing import Any

import numpy as np

from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["concatenate", "create_empty_array"]

_INT64 = np.dtype(np.int64)


# -- concatenate ---------------------------------------------------------------------------


@singledispatch
def concatenate(space: Space[Any], items: Any, out: Any = None) -> Any:
    """Stack per-env samples of the single ``space`` into one batch (into ``out`` if given).

    Arrays take the space's dtype; Dict/Tuple recurse; a Sequence gives a tuple; unknown
    spaces give a plain list.

    Raises:
        ValueError: an item would change under the cast to an integer dtype (out of the
            dtype's range, fractional or NaN), which no member of the space does.
    """
    return list(items)


@concatenate.register(Box)
@concatenate.register(Discrete)
@concatenate.register(MultiDiscrete)
@concatenate.register(MultiBinary)
def _concatenate_array(space: Space[Any], items: Any, out: Any = None) -> Any:
    if not isinstance(items, (list, tuple)):
        items = list(items)  # np.stack needs a sequence, not a generator
    dt = space.dtype if out is None else out.dtype
    assert dt is not None  # every array space has a dtype
    if dt.kind != "f":
        # An integer cast wraps 300 to 44 in uint8 and truncates 1.9 to 1: values that are no
        # member become valid-looking ones. Items already of the dtype (Python ints: int64)
        # cannot change, so only other items are checked.
        for item in items:
            if getattr(item, "dtype", _INT64 if type(item) is int else None) != dt:
                _check_cast_keeps(space, items, dt)
                break
    if out is None:
        return np.stack(items, axis=0, dtype=dt, casting="unsafe")
    return np.stack(items, axis=0, out=out, casting="unsafe")


def _check_cast_keeps(space: Space[Any], items: Sequence[Any], dt: np.dtype[Any]) -> None:
    """Raise unless casting ``items`` to the integer dtype ``dt`` keeps every value."""
    if dt.kind in "iu" and all(type(item) is int for item in items):
        # Python ints: compared exactly (a stack of them may be float64, rounding 2**64 - 1)
        info = np.iinfo(dt)
        for i, item in enumerate(items):
            if not info.min <= item <= info.max:
                raise ValueError(
                    f"items[{i}] = {item!r} is not a member of {space!r}: stacking it as {dt} "
                    "would change its value."
                )
        return
    original = np.stack(items, axis=0)
    if np.can_cast(original.dtype, dt, "safe"):
        return
    with np.errstate(invalid="ignore"):  # NaN and inf: reported below, not warned about
        changed = original != original.astype(dt)
    if not bool(changed.any()):
        return
    i = int(np.argmax(changed.reshape(len(items), -1).any(axis=1)))
    raise ValueError(
        f"items[{i}] = {items[i]!r} is not a member of {space!r}: stacking it as {dt} would "
        "change its values."
    )


@concatenate.register(Dict)
def _concatenate_dict(space: Dict, items: Any, out: Any = None) -> dict[Any, Any]:
    items = list(items)
    try:
        return {
            key: concatenate(
                child, [item[key] for item in items], None if out is None else out[key]
            )
            for key, child in space.items()
        }
    except KeyError:  # checked only on failure: batching is on every vector step
        for i, item in enumerate(items):
            missing = [key for key in space if key not in item]
            if missing:
                raise ValueError(f"items[{i}] has no key {missing[0]!r} of {space!r}.") from None
        raise


@concatenate.register(Tuple)
def _concatenate_tuple(space: Tuple, items: Any, out: Any = None) -> tuple[Any, ...]:
    items = list(items)
    return tuple(
        concatenate(child, [item[i] for item in items], None if out is None else out[i])
        for i, child in enumerate(space.spaces)
    )


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
