"""Batching: batch_space, concatenate, iterate and create_empty_array."""

from __future__ import annotations

import collections.abc as cabc
import copy
from collections.abc import Callable, Iterator
from functools import singledispatch
from typing import Any, TypeVar

import numpy as np

from sekai.spaces._explain import short_repr
from sekai.spaces._kinds import fold_leaves, sub_spaces
from sekai.spaces._stack import _rows, check_count, concatenate, create_empty_array
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["batch_space", "concatenate", "create_empty_array", "iterate"]


def _check_n(n: Any) -> int:
    return check_count(n, 1, purpose=" to batch a space")


_C = TypeVar("_C", bound=Space[Any])


def _rng_copy(space: Space[Any]) -> np.random.Generator:
    """A copy of ``space``'s generator, so a batched space draws reproducibly after seeding."""
    return copy.deepcopy(space.rng)


# -- batch_space ---------------------------------------------------------------------------


@singledispatch
def batch_space(space: Space[Any], n: int = 1) -> Space[Any]:
    """The space of ``n`` stacked samples of ``space``.

    Box -> Box ``(n, *shape)``; Discrete -> MultiDiscrete; MultiDiscrete/MultiBinary -> a
    leading axis; Dict/Tuple -> children batched (a MaskedBox becomes a plain Dict); Sequence
    and unknown spaces -> a Tuple of ``n`` independently seeded copies.

    Raises:
        ValueError: ``n < 1``.
    """
    if not isinstance(space, Space):
        raise TypeError(f"batch_space expects a sekai Space, got {type(space).__name__}.")
    n = _check_n(n)
    # Unknown spaces: a Tuple of copies, each seeded from the original's generator.
    copies = [copy.deepcopy(space) for _ in range(n)]
    draws = _rng_copy(space).integers(2**63, size=n)
    for child, child_seed in zip(copies, draws.tolist()):
        child.seed(int(child_seed))
    return Tuple(copies, seed=_rng_copy(space))


@batch_space.register(Box)
def _batch_box(space: Box, n: int = 1) -> Box:
    n = _check_n(n)
    reps = (n,) + (1,) * len(space.shape)
    return Box(
        np.tile(space.low, reps),
        np.tile(space.high, reps),
        dtype=space.dtype,
        seed=_rng_copy(space),
    )


@batch_space.register(Discrete)
def _batch_discrete(space: Discrete, n: int = 1) -> MultiDiscrete:
    n = _check_n(n)
    return MultiDiscrete(
        np.full((n,), space.n, dtype=np.int64),
        dtype=space.dtype,
        start=np.full((n,), space.start, dtype=np.int64),
        seed=_rng_copy(space),
    )


@batch_space.register(MultiDiscrete)
def _batch_multi_discrete(space: MultiDiscrete, n: int = 1) -> MultiDiscrete:
    n = _check_n(n)
    reps = (n,) + (1,) * space.nvec.ndim
    return MultiDiscrete(
        np.tile(space.nvec, reps),
        dtype=space.dtype,
        start=np.tile(space.start, reps),
        seed=_rng_copy(space),
    )


@batch_space.register(MultiBinary)
def _batch_multi_binary(space: MultiBinary, n: int = 1) -> MultiBinary:
    n = _check_n(n)
    return MultiBinary((n, *space.shape), seed=_rng_copy(space))


@batch_space.register(Dict)
def _batch_dict(space: Dict, n: int = 1) -> Dict:
    n = _check_n(n)
    batched = Dict({key: batch_space(child, n) for key, child in space.items()})
    return _with_own_rng(batched, space)


@batch_space.register(Tuple)
def _batch_tuple(space: Tuple, n: int = 1) -> Tuple:
    n = _check_n(n)
    return _with_own_rng(Tuple([batch_space(child, n) for child in space.spaces]), space)


def _with_own_rng(batched: _C, space: Space[Any]) -> _C:
    """``batched`` with a copy of ``space``'s own generator, leaving its children's (copies of
    the children's generators) as they are: seeding it would reseed them."""
    if space._rng is not None:
        batched._rng, batched._rng_seed = copy.deepcopy(space._rng), space._rng_seed
    return batched


# -- Sequence cases of the stacking dispatchers (sekai.spaces._stack) ---------------


@concatenate.register(Sequence)
def _concatenate_sequence(space: Sequence, items: Any, out: Any = None) -> tuple[Any, ...]:
    # The batch is a new tuple of the items whatever ``out`` (create_empty_array's placeholder,
    # a tuple, cannot be written into): a Dict or Tuple buffer takes it as its part.
    return tuple(items)


# -- iterate -------------------------------------------------------------------------------


@singledispatch
def iterate(space: Space[Any], batch: Any) -> Iterator[Any]:
    """Iterate the per-env items of ``batch``, a sample of the batched ``space``.

    The inverse of ``concatenate``: arrays along axis 0, Dict/Tuple in lockstep; a Tuple of
    Sequences or unknown spaces (their batched form) and a list iterate their items directly.

    Raises:
        TypeError: the space cannot be a batched space (Discrete) or is unknown.
    """
    if isinstance(batch, list):
        return iter(batch)
    raise TypeError(f"Unable to iterate over a batch of a {type(space).__name__} space.")


@iterate.register(Box)
@iterate.register(MultiDiscrete)
@iterate.register(MultiBinary)
def _iterate_array(space: Space[Any], batch: Any) -> Iterator[Any]:
    if type(batch) is np.ndarray and batch.ndim:  # the usual batch, without the ABC checks
        return iter(batch)
    if (
        isinstance(batch, (str, bytes, cabc.Mapping))
        or not isinstance(batch, cabc.Iterable)
        or getattr(batch, "ndim", 1) == 0
    ):
        raise ValueError(
            f"A batch of {space!r} must be an array of shape {space.shape} (or a list of its "
            f"items), got {_described(batch)}."
        )
    return iter(batch)


def _described(batch: Any) -> str:
    """``batch`` for "got ...": its type and a short repr."""
    return f"{type(batch).__name__} {short_repr(batch, 80)}"


@iterate.register(Discrete)
@iterate.register(Sequence)
def _iterate_unbatched(space: Space[Any], batch: Any) -> Iterator[Any]:
    raise TypeError(
        f"Unable to iterate over a {type(space).__name__} space: it is not a batched space "
        "(iterate takes batch_space(space, n))."
    )


def _holds_data(space: Space[Any]) -> bool:
    """False for Dict/Tuple with no leaf at all: their batches cannot tell how many items."""
    return fold_leaves(space, lambda leaf: True, any)


def _empty_item(space: Space[Any]) -> Any:
    if isinstance(space, Dict):
        return {key: _empty_item(child) for key, child in space.items()}
    assert isinstance(space, Tuple)
    return tuple(_empty_item(child) for child in space.spaces)


def _lockstep(space: Dict | Tuple, parts: list[Any], names: list[str]) -> Iterator[tuple[Any, ...]]:
    """Iterate the children of ``space`` together (``parts``: their batches, called ``names``
    in messages); leafless children repeat their (empty) item.

    Raises:
        ValueError: the children's batches hold different numbers of items, or no child
            holds data, so nothing tells how many items the batch holds.
    """
    spaces = sub_spaces(space) or []
    informative = [i for i, child in enumerate(spaces) if _holds_data(child)]
    if not informative:
        raise ValueError(
            f"Cannot iterate a batch of {space!r}: none of its sub-spaces holds data, so the "
            "batch does not tell how many items it has."
        )
    lengths = {i: _length(spaces[i], parts[i]) for i in informative}
    if len({n for n in lengths.values() if n is not None}) > 1:
        counts = ", ".join(f"{names[i]} has {n}" for i, n in lengths.items() if n is not None)
        raise ValueError(
            f"The parts of a batch of {space!r} hold different numbers of items: {counts}."
        )
    constants = {i: _empty_item(child) for i, child in enumerate(spaces) if i not in informative}
    iterators = [iterate(spaces[i], parts[i]) for i in informative]

    def rows() -> Iterator[tuple[Any, ...]]:
        for values in zip(*iterators):
            row = dict(zip(informative, values))
            yield tuple(row[i] if i in row else constants[i] for i in range(len(spaces)))

    return rows()


def _length(space: Space[Any], batch: Any) -> int | None:
    """How many items ``batch`` (of the batched ``space``) holds; None when it cannot tell."""
    if isinstance(space, Dict):
        return _length_of_parts(space, _dict_parts(space, batch))
    if isinstance(space, Tuple) and not _is_batch_of_items(space):
        return _length_of_parts(space, list(batch))
    try:
        return len(batch)
    except TypeError:
        return None


def _length_of_parts(space: Dict | Tuple, parts: list[Any]) -> int | None:
    spaces = list(space.values()) if isinstance(space, Dict) else list(space.spaces)
    for child, part in zip(spaces, parts):
        if _holds_data(child):
            return _length(child, part)  # the others are checked as the batch is iterated
    return None


def _dict_parts(space: Dict, batch: Any) -> list[Any]:
    """The children's batches of a Dict batch, in the space's key order."""
    if not isinstance(batch, cabc.Mapping):
        raise ValueError(
            f"A batch of {space!r} must be a dict with its keys, got {type(batch).__name__}."
        )
    missing = [key for key in space if key not in batch]
    if missing:
        raise ValueError(f"The batch of {space!r} has no key {missing[0]!r}.")
    return [batch[key] for key in space]


@iterate.register(Dict)
def _iterate_dict(space: Dict, batch: Any) -> Iterator[dict[Any, Any]]:
    keys = list(space.keys())
    rows = _lockstep(space, _dict_parts(space, batch), [f"batch[{key!r}]" for key in keys])
    return (dict(zip(keys, row)) for row in rows)


@iterate.register(Tuple)
def _iterate_tuple(space: Tuple, batch: Any) -> Iterator[Any]:
    if _is_batch_of_items(space):
        return iter(batch)
    if not isinstance(batch, (tuple, list)):
        raise ValueError(
            f"A batch of {space!r} must be a tuple with one batch per sub-space, got "
            f"{_described(batch)}."
        )
    return _lockstep(space, list(batch), [f"batch[{i}]" for i in range(len(space))])


def _is_batch_of_items(space: Tuple) -> bool:
    """Whether ``space`` is the batched form (a Tuple of copies) of a Sequence or unknown space."""
    children = space.spaces
    return bool(children) and all(
        isinstance(child, Sequence) or iterate.dispatch(type(child)) is iterate.dispatch(object)
        for child in children
    )


@create_empty_array.register(Sequence)
def _empty_sequence(space: Sequence, n: int | None = 1, fn: Callable[..., Any] = np.zeros) -> Any:
    if n is None:
        return space.pack([])
    return tuple(space.pack([]) for _ in range(_rows(n)))
