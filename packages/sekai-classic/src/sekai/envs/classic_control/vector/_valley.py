"""ValleyVecEnv: the valley both native mountain cars drive in, for many sub-envs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control._valley import ValleyEnv
from sekai.envs.classic_control.vector._common import ClassicVecEnv, uniform_rows

__all__ = ["ValleyVecEnv"]


class ValleyVecEnv(ClassicVecEnv):
    """The valley both native mountain cars drive in: ``ValleyEnv`` for many sub-envs.

    Copies the valley's constants from the single env; ``state`` (position, velocity) has shape
    ``(num_envs, 2)``.
    """

    _reset_range = (-0.6, -0.4)

    def __init__(
        self,
        num_envs: int,
        single: ValleyEnv[Any],
        *,
        autoreset: bool,
        max_episode_steps: int | None,
    ) -> None:
        super().__init__(num_envs, single, autoreset=autoreset, max_episode_steps=max_episode_steps)
        self.min_position: Any = single.min_position
        self.max_position: Any = single.max_position
        self.max_speed: Any = single.max_speed
        self.goal_position: Any = single.goal_position
        self.goal_velocity: Any = single.goal_velocity
        self.state = np.zeros((self.num_envs, 2))

    def _reset_envs(
        self, indices: npt.NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        rows = np.zeros((len(indices), 2))
        rows[:, 0] = uniform_rows(self.rng, options, self._reset_range, 1)[:, 0]
        self.state[indices] = rows
