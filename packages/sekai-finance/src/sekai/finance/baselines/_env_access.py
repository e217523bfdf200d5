"""How baseline policies read state and call methods on a single env, a native or another VecEnv."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._evaluate import is_batch

__all__ = ["call_batched", "is_vector", "native_env", "read_state"]


is_vector = is_batch  # a VecEnv or a vector wrapper: the policy returns a batch


def native_env(env: Any) -> Any | None:
    """The native vector env under ``env`` (through vector wrappers), or None."""
    from sekai.vector import NativeVecEnv

    if not is_vector(env):
        return None

    base = env.unwrapped
    return base if isinstance(base, NativeVecEnv) else None


def read_state(env: Any, name: str) -> Any:
    """Read state ``name``: a scalar for a single env, one entry per sub-env for a VecEnv."""
    if is_vector(env):
        native = native_env(env)
        if native is not None:
            return np.asarray(getattr(native, name))
        return np.asarray(env.get_attr(name))
    return env.get_attr(name)


def call_batched(env: Any, name: str) -> np.ndarray:
    """Call method ``name``: its result for a single env, stacked per sub-env for a VecEnv.

    A native env's method already returns the batch (one row per sub-env).
    """
    if is_vector(env):
        native = native_env(env)
        if native is not None:
            return np.asarray(getattr(native, name)())
        return np.stack([np.asarray(v) for v in env.call(name)])
    return np.asarray(env.get_attr(name)())
