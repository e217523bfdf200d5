"""Small helpers shared by the finance kernels: refusals, dtypes, masked merges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "at_least",
    "at_most",
    "float_dtype",
    "int_dtype",
    "merge",
    "merge_state",
    "untraceable",
]

Array = Any


def untraceable(env_id: str, argument: str, value: Any, why: str) -> ValueError:
    """The error for an argument an array kernel cannot run (built, not raised)."""
    return ValueError(
        f"{env_id}'s array kernel cannot trace {argument}={value!r}: {why}. Use a supported "
        f"value, or vectorization_mode='native' (or 'sync'), which run any {argument}."
    )


def float_dtype(array: Array) -> Any:
    """The float dtype the driver chose, read off one of its arrays."""
    return array.dtype


def int_dtype(xp: Any, dtype: Any) -> Any:
    """Integers to go with float ``dtype``: int64 with float64, else int32 (JAX without x64)."""
    return xp.int64 if dtype == xp.float64 else xp.int32


def at_least(xp: Any, x: Array, low: float) -> Array:
    """``xp.maximum(x, low)`` for a Python number ``low`` (NaN stays NaN). Written with
    ``where``: array-api-compat's ``maximum`` with a scalar breaks a ``torch.compile`` graph."""
    return xp.where(x < low, low, x)


def at_most(xp: Any, x: Array, high: float) -> Array:
    """``xp.minimum(x, high)`` for a Python number ``high`` (as ``at_least``)."""
    return xp.where(x > high, high, x)


def merge(xp: Any, mask: Array, new: Array, old: Array | None) -> Array:
    """``new`` where ``mask`` (sub-envs, the leading axis), else ``old`` (all new when None)."""
    if old is None:
        return new
    where = xp.reshape(mask, (mask.shape[0],) + (1,) * (len(new.shape) - 1))
    return xp.where(where, new, old)


def merge_state(
    xp: Any, mask: Array, fresh: Mapping[str, Array], state: Mapping[str, Array] | None
) -> dict[str, Array]:
    """Every entry of ``fresh`` merged into ``state`` (``merge``) where ``mask``."""
    return {
        name: merge(xp, mask, value, None if state is None else state[name])
        for name, value in fresh.items()
    }
