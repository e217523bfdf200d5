"""Flattening samples to 1-D float32 vectors: flatdim, flatten, flatten_space."""

from __future__ import annotations

import collections.abc as cabc
import math
import operator
from collections.abc import Callable
from functools import singledispatch
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces._kinds import sub_spaces
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space, _Layout
from sekai.spaces.tuple import Tuple

__all__ = ["flatdim", "flatten", "flatten_space", "not_flattenable"]

_F32 = np.float32
_F32_DTYPE = np.dtype(_F32)


def not_flattenable(fn_name: str, space: Space[Any]) -> TypeError:
    """The error raised for spaces with no fixed-size flat form (Sequence)."""
    return TypeError(
        f"{fn_name} is not defined for {type(space).__name__} spaces (samples have no fixed "
        "size); wrap the environment in sekai.PadSequenceObservation to pad sequences to a "
        "fixed length first."
    )


def _unregistered(fn_name: str, space: Space[Any]) -> NotImplementedError:
    return NotImplementedError(f"{fn_name} not implemented for {type(space).__name__}")


# -- flatdim -------------------------------------------------------------------------------


@singledispatch
def flatdim(space: Space[Any]) -> int:
    """Length of ``flatten(space, x)`` for any sample ``x``.

    Raises:
        NotImplementedError: no implementation is registered for the space's type.
    """
    raise _unregistered("flatdim", space)


@flatdim.register(Box)
@flatdim.register(MultiBinary)
def _flatdim_box(space: Box | MultiBinary) -> int:
    return math.prod(space.shape)


@flatdim.register(Discrete)
def _flatdim_discrete(space: Discrete) -> int:
    return space.n


@flatdim.register(MultiDiscrete)
def _flatdim_multi_discrete(space: MultiDiscrete) -> int:
    return int(space.nvec.sum())


@flatdim.register(Dict)
@flatdim.register(Tuple)
def _flatdim_composite(space: Dict | Tuple) -> int:
    return _plan(space)[2]


@flatdim.register(Sequence)
def _flatdim_sequence(space: Sequence) -> int:
    raise not_flattenable("flatdim", space)


# -- flatten -------------------------------------------------------------------------------


@singledispatch
def flatten(space: Space[Any], x: Any) -> NDArray[np.float32]:
    """Flatten a sample of ``space`` to a new 1-D float32 array of length ``flatdim(space)``.

    Box/MultiBinary ravel, Discrete/MultiDiscrete become one-hot vectors, Dict/Tuple
    concatenate their children in key/child order.

    Raises:
        NotImplementedError: no implementation is registered for the space's type.
    """
    raise _unregistered("flatten", space)


@flatten.register(Box)
def _flatten_box(space: Box, x: Any) -> NDArray[np.float32]:
    # A copy (a float32 array's, the common case, is the fastest): the result never aliases
    # the observation.
    plain = type(x) is np.ndarray and x.dtype is _F32_DTYPE
    out: NDArray[np.float32] = x.copy() if plain else _as_f32(x)
    if out.shape != space.shape:
        raise _wrong_shape(space, out)
    return out.reshape(-1)


@flatten.register(MultiBinary)
def _flatten_multi_binary(space: MultiBinary, x: Any) -> NDArray[np.float32]:
    out = np.zeros(math.prod(space.shape), dtype=_F32)
    _write_multi_binary(space, x, out)
    return out


@flatten.register(Discrete)
def _flatten_discrete(space: Discrete, x: Any) -> NDArray[np.float32]:
    out = np.zeros(space.n, dtype=_F32)
    _write_discrete(space, x, out)
    return out


@flatten.register(MultiDiscrete)
def _flatten_multi_discrete(space: MultiDiscrete, x: Any) -> NDArray[np.float32]:
    out = np.zeros(int(space.nvec.sum()), dtype=_F32)
    _write_multi_discrete(space, x, out)
    return out


@flatten.register(Dict)
@flatten.register(Tuple)
def _flatten_composite(space: Dict | Tuple, x: Any) -> NDArray[np.float32]:
    plan = _plan(space)
    out = np.zeros(plan[2], dtype=_F32)
    _write_composite(space, x, out)
    return out


@flatten.register(Sequence)
def _flatten_sequence(space: Sequence, x: Any) -> NDArray[np.float32]:
    raise not_flattenable("flatten", space)


# -- writers: flatten a child straight into a slice of the parent's output -------------------
#
# They check what they rely on, and no more (flatten is on hot paths): Box values only their
# shape; Discrete, MultiDiscrete and MultiBinary values their shape and that every value is
# an integral member (an integral float such as 2.0 is accepted).


def _not_member(space: Space[Any], x: Any) -> ValueError:
    return ValueError(f"Cannot flatten {x!r}: it is not a member of {space!r}.")


def _wrong_shape(space: Space[Any], x: NDArray[Any]) -> ValueError:
    return ValueError(
        f"Cannot flatten a value of shape {x.shape}: it is not a member of {space!r} "
        f"(shape {space.shape})."
    )


def _write_box(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    a = np.asarray(x)
    if a.shape != space.shape:
        raise _wrong_shape(space, a)
    if a.dtype is _F32_DTYPE or _fits_f32(a.dtype):
        out[:] = a.reshape(-1)
    else:
        with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as in _flatten_box
            out[:] = a.reshape(-1)


def _as_f32(x: Any) -> NDArray[np.float32]:
    """``np.array(x, dtype=float32)``: values beyond float32's range become +-inf, which
    flatten_space's bounds hold, with no overflow warning."""
    try:
        fits = _fits_f32(x.dtype)
    except AttributeError:  # not an array: Python floats and objects may overflow
        fits = False
    if fits:
        return np.array(x, dtype=_F32)
    with np.errstate(over="ignore"):
        return np.array(x, dtype=_F32)


def _fits_f32(dtype: np.dtype[Any]) -> bool:
    """Whether every value of ``dtype`` casts to float32 without overflowing: ints, bools and
    floats up to float32. Only other sources need ``np.errstate``, which costs several times
    the cast of a small array (flatten is on every step of FlattenObservation)."""
    kind = dtype.kind
    return kind in "biu" or (kind == "f" and dtype.itemsize <= 4)


def _write_multi_binary(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    a = np.asarray(x)
    if a.shape != space.shape:
        raise _wrong_shape(space, a)
    if a.dtype.kind != "b" and not bool(((a == 0) | (a == 1)).all()):
        raise _not_member(space, x)
    out[:] = a.reshape(-1)


def _write_discrete(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    try:
        if isinstance(x, np.bool_):  # NumPy < 2.3 indexes with one, with a DeprecationWarning
            raise TypeError
        i = operator.index(x) - space.start
    except TypeError:
        # Not an int: accept a bool or integral float scalar, as int(x) would give its value.
        a = np.asarray(x)
        if a.shape != () or a.dtype.kind not in "bf" or not float(a).is_integer():
            raise _not_member(space, x) from None
        i = int(a) - space.start
    if not 0 <= i < space.n:
        raise _not_member(space, x)
    out[i] = 1.0


def _write_multi_discrete(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    a = np.asarray(x)
    if a.shape != space.shape:
        raise _wrong_shape(space, a)
    if a.dtype.kind not in "biuf":
        raise _not_member(space, x)
    rel = (a - space.start).reshape(-1)
    # NaN fails both comparisons, inf the upper bound, a fractional value the floor check.
    inside = (rel >= 0) & (rel < space._flat_n)
    if a.dtype.kind not in "biu":
        inside &= rel == np.floor(rel)
    if not bool(inside.all()):
        raise _not_member(space, x)
    out[space._flat_offsets + rel.astype(np.intp, copy=False)] = 1.0


def _write_generic(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    out[:] = flatten(space, x)


def _write_composite(space: Any, x: Any, out: NDArray[np.float32]) -> None:
    if isinstance(space, Dict):
        # The same number of keys, and each of the space's found below: exactly its keys.
        if not (type(x) is dict or isinstance(x, cabc.Mapping)) or len(x) != len(space):
            raise _not_dict_member(space, x)
    elif not isinstance(x, (tuple, list)) or len(x) != len(space):
        raise _not_member(space, x)
    for index, child, writer, start, stop in _plan(space)[1]:
        try:
            value = x[index]
        except KeyError:
            raise _not_dict_member(space, x) from None
        writer(child, value, out[start:stop])


def _not_dict_member(space: Dict, x: Any) -> ValueError:
    if not isinstance(x, cabc.Mapping):
        return _not_member(space, x)
    return ValueError(
        f"Cannot flatten {x!r}: it is not a member of {space!r} (its keys are {list(x)}, not "
        f"{list(space)})."
    )


_Writer = Callable[[Any, Any, NDArray[np.float32]], None]
_WRITERS: dict[Callable[..., Any], _Writer] = {
    _flatten_box: _write_box,
    _flatten_multi_binary: _write_multi_binary,
    _flatten_discrete: _write_discrete,
    _flatten_multi_discrete: _write_multi_discrete,
    _flatten_composite: _write_composite,
}


def _plan(space: Dict | Tuple) -> tuple[int, list[tuple[Any, Space[Any], _Writer, int, int]], int]:
    """``(layout version, [(key, child, writer, start, stop), ...], flatdim)``, cached on space."""
    plan = space._plan
    if plan is not None and plan[0] == _Layout.version:
        return plan  # type: ignore[no-any-return]
    items = space.items() if isinstance(space, Dict) else enumerate(space.spaces)
    entries = []
    offset = 0
    for key, child in items:
        size = flatdim(child)
        writer = _WRITERS.get(flatten.dispatch(type(child)), _write_generic)
        entries.append((key, child, writer, offset, offset + size))
        offset += size
    plan = (_Layout.version, entries, offset)
    space._plan = plan
    return plan


# -- flatten_space -------------------------------------------------------------------------


@singledispatch
def flatten_space(space: Space[Any]) -> Box:
    """The float32 Box that ``flatten(space, x)`` results lie in.

    Raises:
        NotImplementedError: no implementation is registered for the space's type.
    """
    raise _unregistered("flatten_space", space)


@flatten_space.register(Box)
def _flatten_space_box(space: Box) -> Box:
    with np.errstate(over="ignore"):
        return Box(
            space.low.reshape(-1).astype(_F32),
            space.high.reshape(-1).astype(_F32),
            dtype=_F32,
        )


@flatten_space.register(Discrete)
@flatten_space.register(MultiDiscrete)
@flatten_space.register(MultiBinary)
def _flatten_space_onehot(space: Discrete | MultiDiscrete | MultiBinary) -> Box:
    return Box(0.0, 1.0, shape=(flatdim(space),), dtype=_F32)


@flatten_space.register(Dict)
@flatten_space.register(Tuple)
def _flatten_space_composite(space: Dict | Tuple) -> Box:
    children = [flatten_space(child) for child in sub_spaces(space) or ()]
    if not children:
        return Box(np.zeros(0, _F32), np.zeros(0, _F32), shape=(0,), dtype=_F32)
    return Box(
        np.concatenate([c.low for c in children]),
        np.concatenate([c.high for c in children]),
        dtype=_F32,
    )


@flatten_space.register(Sequence)
def _flatten_space_sequence(space: Sequence) -> Box:
    raise not_flattenable("flatten_space", space)
