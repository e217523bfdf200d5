"""Spawnable: per-sub-env objects that make_vec copies for every sub-env."""

from __future__ import annotations

import abc

__all__ = ["Spawnable"]


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
