"""Spawnable: per-sub-env objects that make_vec copies for every sub-env."""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from sekai.vector._contract.seeding import generator_for_all

__all__ = ["Spawnable", "spawn_each"]

# Why one Generator cannot be the value of several sub-envs, whatever the backend.
_SHARED_OR_COPIED = (
    " (sub-envs in one process would share it and draw from it in turn, and sub-envs in "
    "worker processes would each get a copy of it and replay the same stream, so the episodes "
    "would depend on the backend)"
)


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


def spawn_each(value: Any, count: int, *, what: str) -> list[Any]:
    """``value``, given as ``what`` (``"set_attr('rng', ...)"``) for ``count`` sub-envs: a
    ``Spawnable``'s ``spawn()`` each (so a stateful one is neither shared nor advanced), anything
    else the value itself each time.

    Raises:
        ValueError: ``value`` is a numpy Generator and ``count`` is more than 1.
    """
    if isinstance(value, Spawnable):
        return [value.spawn() for _ in range(count)]
    if isinstance(value, np.random.Generator) and count > 1:
        instead = (
            f"Pass a list of {count} generators, one per sub-env (e.g. rng.spawn({count})), "
            "or seed the sub-envs with reset(seed=...)."
        )
        raise ValueError(generator_for_all(what, count, instead, _SHARED_OR_COPIED))
    return [value] * count
