"""Spawnable: per-sub-env objects that make_vec copies for every sub-env."""

from __future__ import annotations

import abc
from typing import Any

__all__ = ["Spawnable", "spawn_each"]


class Spawnable(abc.ABC):
    """An object a vector env gives each sub-env its own ``spawn()`` of.

    ``make_vec`` replaces every keyword argument that is a Spawnable by ``value.spawn()`` for each
    sub-env (non-native modes); a native env spawns one per sub-env itself. ``set_attr`` of one
    Spawnable (not a list of one per sub-env) spawns it the same way, on every backend. Return
    ``self`` to share one instance between sub-envs, or a fresh copy when the object keeps
    per-env state.
    """

    @abc.abstractmethod
    def spawn(self) -> Spawnable:
        """Return the instance one sub-env should use."""


def spawn_each(value: Any, count: int) -> list[Any]:
    """``value`` for ``count`` sub-envs: a ``Spawnable``'s ``spawn()`` each (so a stateful one is
    neither shared nor advanced), anything else the value itself each time."""
    if isinstance(value, Spawnable):
        return [value.spawn() for _ in range(count)]
    return [value] * count
