"""DelayAction: execute each action a fixed number of steps after it was chosen."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

import numpy as np

from sekai._args import IntLike, check_int
from sekai._box_actions import checked_action
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.wrapper import ResultWrapper
from sekai.spaces import Box
from sekai.wrappers.autoreset import warn_if_around_autoreset

__all__ = ["DelayAction"]


def _copy_action(action: Any) -> Any:
    if isinstance(action, np.ndarray):
        return action.copy()
    if isinstance(action, (int, float, np.generic)):
        return action
    return copy.deepcopy(action)


class DelayAction(ResultWrapper[Any, Any, Any, Any]):
    """Execute each action ``delay`` steps later; the first ``delay`` steps execute ``noop``.

    The queue of chosen but not yet executed actions (``pending_actions``, oldest first) is
    cleared on reset. ``delay=0`` passes actions straight through.

    Args:
        env: the environment to wrap.
        delay: the number of steps between choosing and executing an action (>= 0).
        noop: the action executed while the queue fills; defaults to ``action_space.zero()``
            for Box action spaces and is required for every other space.
    """

    def __init__(self, env: Env[Any, Any], delay: IntLike, *, noop: Any = None) -> None:
        super().__init__(env)
        self.delay = check_int("DelayAction", "delay", delay, 0)
        space = env.action_space
        if noop is None:
            if not isinstance(space, Box):
                raise ValueError(
                    "DelayAction needs an explicit noop action for "
                    f"{type(space).__name__} action spaces."
                )
            noop = space.zero()
        elif not space.contains(noop):
            raise ValueError(f"noop {noop} is not in the action space {space!r}.")
        self.noop = noop
        self._pending: deque[Any] = deque()
        warn_if_around_autoreset(self)

    @property
    def pending_actions(self) -> list[Any]:
        """Actions chosen but not executed yet, oldest first."""
        return list(self._pending)

    def _on_reset(self, seed: SeedLike) -> None:
        self._pending.clear()

    def _step_action(self, action: Any) -> Any:
        if self.delay == 0:
            return action
        checked_action(action, self.action_space)  # refused now, not steps later
        self._pending.append(_copy_action(action))
        if len(self._pending) > self.delay:
            return self._pending.popleft()
        return _copy_action(self.noop)
