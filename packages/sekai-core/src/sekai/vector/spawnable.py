"""Spawnable: per-sub-env objects that make_vec copies for every sub-env."""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from sekai.vector._contract.seeding import generator_for_all

__all__ = ["Spawnable", "per_env_values", "spawn_each"]

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
        raise ValueError(_one_generator(what, count, count))
    return [value] * count


def per_env_values(values: Any, count: int, *, what: str) -> list[Any]:
    """The value of each of ``count`` sub-envs that ``values``, given as ``what``, sets: a list
    of exactly ``count`` items as it is (one per sub-env), anything else ``spawn_each``.

    Raises:
        ValueError: one numpy Generator for several sub-envs, given once or listed for each.
    """
    if not (isinstance(values, list) and len(values) == count):
        return spawn_each(values, count, what=what)
    positions: dict[int, list[int]] = {}
    for index, value in enumerate(values):
        if isinstance(value, np.random.Generator):
            positions.setdefault(id(value), []).append(index)
    for shared in positions.values():
        if len(shared) > 1:
            listed = ", ".join(map(str, shared[:-1])) + f" and {shared[-1]}"
            got = f"one numpy Generator for sub-envs {listed}"
            raise ValueError(_one_generator(what, len(shared), count, got))
    return list(values)


def _one_generator(what: str, shared: int, count: int, got: str = "a numpy Generator") -> str:
    """Why one Generator cannot serve ``shared`` of ``count`` sub-envs, and what to pass."""
    instead = (
        f"Pass a list of {count} generators, one per sub-env (e.g. rng.spawn({count})), "
        "or seed the sub-envs with reset(seed=...)."
    )
    return generator_for_all(what, shared, instead, _SHARED_OR_COPIED, got)
