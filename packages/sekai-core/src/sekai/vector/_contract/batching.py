"""Batching helpers every backend shares: stacking observations, dtype casts, row replacement."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple, concatenate

__all__ = ["as_batch_dtype", "copy_batch", "put_rows", "stack_observations"]

_ARRAY_SPACES = (Box, Discrete, MultiDiscrete, MultiBinary)


def stack_observations(space: Space[Any], items: list[Any]) -> Any:
    """Batch per-env observations like ``concatenate(space, items)`` (rule 3: the space's dtype).

    Array spaces take a faster path (``np.array`` builds small batches about twice as fast as
    ``np.stack``) whose result is identical; anything unusual goes to ``concatenate``.
    """
    if isinstance(space, _ARRAY_SPACES):
        try:
            batch = np.array(items, dtype=space.dtype)
        except (ValueError, TypeError):
            batch = None
        if batch is not None and batch.shape == (len(items), *space.shape):
            return batch
    return concatenate(space, items)


def as_batch_dtype(space: Space[Any], batch: Any) -> Any:
    """``batch`` with every array part in the space's dtype (rule 3; no copy when it already is)."""
    if isinstance(space, _ARRAY_SPACES):
        if type(batch) is np.ndarray and batch.dtype == space.dtype:
            return batch
        return np.asarray(batch, dtype=space.dtype)
    if isinstance(space, Dict):
        return {key: as_batch_dtype(sub, batch[key]) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(as_batch_dtype(sub, part) for sub, part in zip(space.spaces, batch))
    return batch


def copy_batch(space: Space[Any], batch: Any) -> Any:
    """An independent copy of a batch."""
    if isinstance(space, _ARRAY_SPACES):
        return np.array(batch, copy=True)
    if isinstance(space, Dict):
        return {key: copy_batch(sub, batch[key]) for key, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(copy_batch(sub, part) for sub, part in zip(space.spaces, batch))
    return copy.deepcopy(batch)


def put_rows(space: Space[Any], dst: Any, src: Any, rows: NDArray[np.bool_]) -> Any:
    """``dst`` with the rows selected by ``rows`` taken from ``src`` (arrays in place)."""
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
    return type(dst)(s if take else d for d, s, take in zip(dst, src, rows.tolist()))
