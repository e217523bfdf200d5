"""TimeLimit: truncate episodes after a fixed number of steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai._args import IntLike
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.wrappers.autoreset import warn_if_around_autoreset

__all__ = ["TimeLimit", "checked_steps"]


def checked_steps(max_episode_steps: Any) -> int:
    """``max_episode_steps`` checked: an int (bools refused) of at least 1.

    Raises:
        TypeError: not an int.
        ValueError: below 1.
    """
    if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, (int, np.integer)):
        raise TypeError(
            f"max_episode_steps must be an int, got {type(max_episode_steps).__name__}."
        )
    if max_episode_steps < 1:
        raise ValueError(f"max_episode_steps must be >= 1, got {max_episode_steps}.")
    return int(max_episode_steps)


class TimeLimit(ResultWrapper[Any, Any, Any, Any]):
    """Truncate the episode once ``max_episode_steps`` steps have been taken since reset.

    Adds ``info["elapsed_steps"]`` on every step. Warns (``UserWarning``) when built around an
    ``AutoReset``, whose resets it cannot see.
    """

    def __init__(self, env: Env[Any, Any], max_episode_steps: IntLike) -> None:
        super().__init__(env)
        self._max_episode_steps = checked_steps(max_episode_steps)
        self._elapsed_steps = 0
        warn_if_around_autoreset(self)

    @property
    def max_episode_steps(self) -> int:
        """The limit (set it, e.g. through ``set_attr``, to change it for later steps)."""
        return self._max_episode_steps

    @max_episode_steps.setter
    def max_episode_steps(self, value: IntLike) -> None:
        self._max_episode_steps = checked_steps(value)

    @property
    def elapsed_steps(self) -> int:
        """Steps taken since the last reset."""
        return self._elapsed_steps

    def _on_reset(self, seed: SeedLike) -> None:
        self._elapsed_steps = 0

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        self._elapsed_steps += 1
        elapsed = self._elapsed_steps
        # A new dict: an env that reuses one info dict must not see earlier results change.
        info = {**result.info, "elapsed_steps": elapsed}
        return StepResult(
            result.observation,
            result.reward,
            result.terminated,
            bool(result.truncated) or elapsed >= self.max_episode_steps,
            info,
        )
