"""Action-mask helpers: find an env's action_mask() and bring masks to one flat layout."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._args import type_name
from sekai.core.env import Env
from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete, Space
from sekai.spaces._array import allowed_mask, numeric_mask

__all__ = ["action_mask_space", "flatten_action_mask", "get_action_mask", "supports_action_mask"]


def _has_action_mask(env: Env[Any, Any], caller: str) -> bool:
    try:
        return env.has_attr("action_mask")
    except AttributeError:
        if isinstance(env, Env):
            raise
    # Only a wrong argument gets here: a sekai Env always has has_attr().
    hint = (
        ' For a vector env, vec.call("action_mask") gives one mask per sub-env.'
        if hasattr(env, "num_envs")
        else ""
    )
    raise TypeError(f"{caller}() expected a sekai.Env, got {type_name(env)}.{hint}")


def supports_action_mask(env: Env[Any, Any]) -> bool:
    """Whether ``env`` (any layer of a wrapper stack) has an ``action_mask`` attribute.

    Raises:
        TypeError: ``env`` is not a sekai Env.
    """
    return _has_action_mask(env, "supports_action_mask")


def get_action_mask(env: Env[Any, Any]) -> Any:
    """The env's current action mask, or ``None`` if it has no ``action_mask()``.

    ``action_mask`` is found with ``get_attr`` (so through wrappers) and called if callable.

    Raises:
        TypeError: ``env`` is not a sekai Env.
    """
    if not _has_action_mask(env, "get_action_mask"):
        return None
    mask = env.get_attr("action_mask")
    return mask() if callable(mask) else mask


def _unsupported(space: Space[Any]) -> TypeError:
    return TypeError(f"Action masks are not supported for {type(space).__name__} action spaces.")


def action_mask_space(space: Space[Any]) -> MultiBinary:
    """The ``MultiBinary`` space of flattened masks for an action space.

    Discrete(n) gives ``MultiBinary(n)``, MultiDiscrete ``MultiBinary(sum(nvec))`` and Box
    ``MultiBinary(prod(shape))``.

    Raises:
        TypeError: masks are not defined for this kind of space.
    """
    if isinstance(space, Discrete):
        return MultiBinary(int(space.n))
    if isinstance(space, MultiDiscrete):
        return MultiBinary(int(np.sum(space.nvec)))
    if isinstance(space, Box):
        return MultiBinary(int(np.prod(space.shape, dtype=np.int64)))
    raise _unsupported(space)


def flatten_action_mask(space: Space[Any], mask: Any) -> NDArray[np.bool_]:
    """Flatten a mask in any of the formats ``space.sample(mask=...)`` accepts to one bool array.

    The result has ``action_mask_space(space).n`` entries, True where the action (or the
    component, for Box) is allowed.

    Raises:
        TypeError: masks are not defined for this kind of space, or the mask holds something
            other than numbers or bools.
        ValueError: the mask has the wrong shape for the space.
    """
    if isinstance(space, Discrete):
        arr = numeric_mask(mask, space)
        if arr.shape != (space.n,):
            raise ValueError(
                f"An action mask for {space!r} must have shape ({space.n},), got {arr.shape}."
            )
        return np.array(allowed_mask(arr, space), dtype=bool)  # a copy, never the env's own
    if isinstance(space, MultiDiscrete):
        # sample()'s own reading of the layouts (a regular list is the padded array, a ragged
        # one the per-entry form) and of the entries, so that both accept the same masks
        flat = [
            allowed_mask(row, space, f" of dimension {index}")
            for index, row in space._mask_rows(mask)
        ]
        return np.concatenate(flat) if flat else np.zeros(0, dtype=bool)
    if isinstance(space, Box):
        return space._kept(mask).flatten()  # sample()'s reading, as a writable copy
    raise _unsupported(space)
