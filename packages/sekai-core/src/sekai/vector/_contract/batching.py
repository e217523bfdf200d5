"""Batching helpers every backend shares: stacking observations, dtype casts, row replacement."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.core._snapshot import snapshot
from sekai.spaces import Dict, Space, Tuple, concatenate
from sekai.spaces._kinds import ARRAY_SPACES as _ARRAY_SPACES
from sekai.vector._contract.checks import (
    array_kinds,
    check_observations,
    observation_checker,
    observation_error,
)

__all__ = [
    "as_batch_dtype",
    "batch_copies",
    "caster",
    "checked_caster",
    "copy_batch",
    "put_rows",
    "slice_rows",
    "stack_observations",
    "stacker",
    "take_rows",
]


def stacker(space: Space[Any]) -> Callable[[list[Any]], Any]:
    """A function batching per-env observations of ``space`` like ``concatenate`` (rule 3).

    Decided once per space (VecEnvs keep it): array spaces take a faster path (``np.array``
    builds small batches about twice as fast as ``np.stack``) with an identical result, and
    fall back to ``concatenate`` for anything unusual. An observation that does not fit the
    space (its shape or dtype kind; ``check_observations``) raises ``ValueError``
    naming its position, the sub-env index, instead of being broadcast into the batch.
    """
    check = observation_checker(space)
    if not isinstance(space, _ARRAY_SPACES):

        def stack_other(items: list[Any]) -> Any:
            check_observations(space, check, items)
            return concatenate(space, items)

        return stack_other
    dtype, shape = np.dtype(space.dtype), tuple(space.shape)
    allowed = array_kinds(dtype)

    def stack(items: list[Any]) -> Any:
        try:
            batch = np.array(items)  # no dtype: a float among ints must not be cast unseen
        except (ValueError, TypeError):
            batch = None
        if (
            batch is None
            or batch.shape[1:] != shape
            or len(batch) != len(items)
            or batch.dtype.kind not in allowed
        ):
            check_observations(space, check, items)  # raises for the first misfit
            return concatenate(space, items)  # they all fit (lists, NumPy scalars, ...)
        if batch.dtype is dtype or batch.dtype == dtype:
            return batch
        cast = batch.astype(dtype)
        if exact and not np.can_cast(batch.dtype, dtype, "safe") and not (cast == batch).all():
            check_observations(space, check, items)  # raises, naming the sub-env
        return cast

    exact = dtype.kind in "iu"
    return stack


def batch_copies(space: Space[Any]) -> bool:
    """Whether a batch of ``space`` (``stacker``, ``concatenate``) is new arrays throughout,
    sharing nothing with the items it was built from: array spaces, and Dicts and Tuples of
    them. Any other part (a Sequence's batch holds the items themselves) is shared."""
    if isinstance(space, _ARRAY_SPACES):
        return True
    if isinstance(space, Dict):
        return all(batch_copies(sub) for sub in space.spaces.values())
    if isinstance(space, Tuple):
        return all(batch_copies(sub) for sub in space.spaces)
    return False


def stack_observations(space: Space[Any], items: list[Any]) -> Any:
    """``stacker(space)(items)``."""
    return stacker(space)(items)


def caster(space: Space[Any]) -> Callable[[Any], Any]:
    """A function giving a batch every array part in the space's dtype (rule 3; no copy when
    it already has it), decided once per space."""
    if isinstance(space, _ARRAY_SPACES):
        dtype = space.dtype

        def cast(batch: Any) -> Any:
            if type(batch) is np.ndarray and batch.dtype == dtype:
                return batch
            return np.asarray(batch, dtype=dtype)

        return cast
    if isinstance(space, Dict):
        parts = {key: caster(sub) for key, sub in space.spaces.items()}
        return lambda batch: {key: cast(batch[key]) for key, cast in parts.items()}
    if isinstance(space, Tuple):
        items = [caster(sub) for sub in space.spaces]
        return lambda batch: tuple(cast(part) for cast, part in zip(items, batch))
    return lambda batch: batch


def checked_caster(space: Space[Any], num_envs: int, source: str) -> Callable[[Any], Any]:
    """``caster(space)`` for a batch an env built as a whole (a native env's ``_observe()``,
    named by ``source``), which first checks it: every array part of shape
    ``(num_envs, *shape)`` and a dtype kind the space's dtype holds (``observation_checker``).
    So floats are not truncated into an integer space, nor a wrong shape passed on. An array
    of exactly the space's dtype and batch shape costs two comparisons.

    Raises:
        ValueError: naming ``source`` and what does not fit.
    """
    cast = caster(space)
    check = observation_checker(space, num_envs)

    def checked(batch: Any) -> Any:
        reason = check(batch)
        if reason is not None:
            raise observation_error(batch, space, reason, method=source)
        return cast(batch)

    if not isinstance(space, _ARRAY_SPACES):
        return checked
    dtype, shape = space.dtype, (num_envs, *space.shape)

    def checked_array(batch: Any) -> Any:
        if type(batch) is np.ndarray and batch.shape == shape and batch.dtype == dtype:
            return batch
        return checked(batch)

    return checked_array


def as_batch_dtype(space: Space[Any], batch: Any) -> Any:
    """``caster(space)(batch)``."""
    return caster(space)(batch)


def copy_batch(space: Space[Any], batch: Any) -> Any:
    """An independent copy of a batch."""
    if isinstance(space, _ARRAY_SPACES):
        return np.array(batch, copy=True)
    if isinstance(space, Dict):
        return {key: copy_batch(sub, batch[key]) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(copy_batch(sub, part) for sub, part in zip(space.spaces, batch))
    return copy.deepcopy(batch)


def slice_rows(space: Space[Any], batch: Any, lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of a batch of ``space`` (views of arrays; a list for other spaces)."""
    if isinstance(space, _ARRAY_SPACES):
        return batch[lo:hi]
    if isinstance(space, Dict):
        return {key: slice_rows(sub, batch[key], lo, hi) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(slice_rows(sub, part, lo, hi) for sub, part in zip(space.spaces, batch))
    return [batch[index] for index in range(lo, hi)]


def take_rows(space: Space[Any], batch: Any, rows: NDArray[np.intp]) -> Any:
    """A new batch of the rows ``rows`` of ``batch`` of ``space``, in that order (arrays are
    copied; other spaces give a list of the same objects)."""
    if isinstance(space, _ARRAY_SPACES):
        return batch[rows]
    if isinstance(space, Dict):
        return {key: take_rows(sub, batch[key], rows) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(take_rows(sub, part, rows) for sub, part in zip(space.spaces, batch))
    return [batch[index] for index in rows.tolist()]


def put_rows(space: Space[Any], dst: Any, src: Any, rows: NDArray[np.bool_]) -> Any:
    """``dst`` with the rows selected by ``rows`` taken from ``src`` (arrays in place; the rows
    of other spaces as ``snapshot`` copies, which neither batch then shares)."""
    if isinstance(space, _ARRAY_SPACES):
        if not dst.flags.writeable:
            dst = dst.copy()
        dst[rows] = src[rows]
        return dst
    if isinstance(space, Dict):
        for key, sub in space.spaces.items():
            dst[key] = put_rows(sub, dst[key], src[key], rows)
        return dst
    if isinstance(space, Tuple):
        return tuple(put_rows(sub, d, s, rows) for sub, d, s in zip(space.spaces, dst, src))
    return type(dst)(snapshot(s) if take else d for d, s, take in zip(dst, src, rows.tolist()))
