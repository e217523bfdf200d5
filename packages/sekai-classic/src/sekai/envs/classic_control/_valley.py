"""ValleyEnv: the valley both mountain cars drive in (bounds, goal, start at rest)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult
from sekai.envs.classic_control._common import check_parameter, reset_bounds

__all__ = ["ValleyEnv"]

ActT = TypeVar("ActT")


class ValleyEnv(Env[npt.NDArray[np.float32], ActT]):
    """The valley both mountain cars drive in: its bounds, the goal, and the start at rest.

    Args:
        goal_position: the position to reach.
        goal_velocity: the minimum velocity at the goal.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 30}
    state: npt.NDArray[np.floating[Any]] | None

    def __init__(self, goal_position: float, goal_velocity: float) -> None:
        self.min_position = -1.2
        self.max_position = 0.6
        self.max_speed = 0.07
        self.goal_position = goal_position
        self.goal_velocity = check_parameter(type(self).__name__, "goal_velocity", goal_velocity)

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[npt.NDArray[np.float32]]:
        """Start at rest at a uniform random position in ``[low, high]``."""
        self._set_rng(seed)
        low, high = reset_bounds(options, -0.6, -0.4)
        self.state = np.array([self.rng.uniform(low=low, high=high), 0.0])
        return ResetResult(self.state.astype(np.float32), {})
