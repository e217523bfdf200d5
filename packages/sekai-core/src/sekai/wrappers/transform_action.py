"""Stateless action wrappers for Box action spaces: ClipAction and RescaleAction."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from sekai.core.env import Env
from sekai.core.wrapper import ActionWrapper
from sekai.error import InvalidAction
from sekai.spaces import Box, Space
from sekai.utils.action_mask import get_action_mask, supports_action_mask

__all__ = ["ClipAction", "RescaleAction"]


def require_box(owner: str, space: Space[Any], what: str = "action") -> Box:
    """Return ``space`` if it is a Box, else raise the wrappers' common TypeError."""
    if not isinstance(space, Box):
        raise TypeError(f"{owner} requires a Box {what} space, got {type(space).__name__}.")
    return space


class ClipAction(ActionWrapper[Any, NDArray[Any], NDArray[Any]]):
    """Clip every action to the bounds of the env's Box action space (the space is unchanged)."""

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        space = require_box("ClipAction", env.action_space)
        self._low, self._high, self._dtype = space.low, space.high, space.dtype

    def action(self, action: ArrayLike) -> NDArray[Any]:
        """Return ``action`` clipped into ``[low, high]`` with the space's dtype.

        Raises:
            sekai.InvalidAction: an action of another shape (clipping would broadcast it).
        """
        x = np.asarray(action, dtype=self._dtype)
        if x.shape != self._low.shape:
            raise InvalidAction(action, self.action_space)
        clipped: NDArray[Any] = np.clip(x, self._low, self._high)
        return clipped

    def reverse_action(self, action: NDArray[Any]) -> NDArray[Any]:
        """Identity: every env action is already a valid wrapper action."""
        return action


class RescaleAction(ActionWrapper[Any, NDArray[Any], NDArray[Any]]):
    """Expose the env's bounded Box actions as ``Box(min_action, max_action)``, mapped affinely.

    Actions are mapped onto the env's range, cast to its dtype and clipped. When the env has an
    ``action_mask()``, masked components are sent as the env space's ``zero()``.

    Args:
        env: an env with a Box action space with finite bounds.
        min_action: the new lower bound (scalar or array broadcastable to the shape).
        max_action: the new upper bound; strictly greater than ``min_action`` everywhere.
    """

    def __init__(self, env: Env[Any, Any], min_action: ArrayLike, max_action: ArrayLike) -> None:
        super().__init__(env)
        space = require_box("RescaleAction", env.action_space)
        if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise ValueError("RescaleAction requires a Box action space with finite bounds.")
        shape = space.shape
        try:
            new_low = np.broadcast_to(np.asarray(min_action, dtype=np.float64), shape)
            new_high = np.broadcast_to(np.asarray(max_action, dtype=np.float64), shape)
        except ValueError:
            raise ValueError(
                f"min_action and max_action must be scalars or broadcastable to {shape}."
            ) from None
        if not (np.all(np.isfinite(new_low)) and np.all(np.isfinite(new_high))):
            raise ValueError("min_action and max_action must be finite.")
        if np.any(new_low >= new_high):
            raise ValueError("min_action must be strictly less than max_action.")
        self.min_action = new_low.copy()
        self.max_action = new_high.copy()
        self._env_space = space
        self._env_low = space.low.astype(np.float64)
        self._env_high = space.high.astype(np.float64)
        self._scale = (self._env_high - self._env_low) / (new_high - new_low)
        self._masked = supports_action_mask(env)
        self.action_space = Box(new_low, new_high, shape=shape, dtype=space.dtype)

    def action(self, action: ArrayLike) -> NDArray[Any]:
        """Map a wrapper action onto the env's range (cast and clipped).

        Raises:
            sekai.InvalidAction: an action of another shape (the map would broadcast it).
        """
        x = np.asarray(action, dtype=np.float64)
        if x.shape != self.min_action.shape:
            raise InvalidAction(action, self.action_space)
        mapped = self._env_low + (x - self.min_action) * self._scale
        clipped: NDArray[Any] = np.clip(mapped, self._env_low, self._env_high)
        out = clipped.astype(self._env_space.dtype)
        if self._masked:
            mask = get_action_mask(self.env)
            if mask is not None:
                allowed = np.broadcast_to(np.asarray(mask) != 0, out.shape)
                out = np.where(allowed, out, self._env_space.zero())
        return out

    def reverse_action(self, action: ArrayLike) -> NDArray[Any]:
        """Map an env action back into ``[min_action, max_action]`` (clipped)."""
        back = (
            self.min_action + (np.asarray(action, dtype=np.float64) - self._env_low) / self._scale
        )
        clipped: NDArray[Any] = np.clip(back, self.min_action, self.max_action)
        return clipped.astype(self._env_space.dtype)
