"""MountainCarVecEnv: MountainCar-v0 for many sub-envs at once, with array operations."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control.mountain_car import MountainCarEnv
from sekai.envs.classic_control.vector._common import bound_array, keep_frozen
from sekai.envs.classic_control.vector._valley import ValleyVecEnv

__all__ = ["MountainCarVecEnv"]


class MountainCarVecEnv(ValleyVecEnv):
    """``num_envs`` MountainCar-v0 sub-envs stepped together with array operations.

    Same dynamics, spaces, rewards and reset options as ``MountainCarEnv``: under the same
    states and actions every sub-env matches the single env bit for bit. ``state`` (position,
    velocity; float64) has shape ``(num_envs, 2)``.

    Args:
        num_envs: number of sub-envs.
        goal_velocity: as for ``MountainCarEnv``.
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps (``make_vec`` passes
            the registered 200).
    """

    metadata = MountainCarEnv.metadata

    low = bound_array("low")
    high = bound_array("high")

    def __init__(
        self,
        num_envs: int,
        *,
        goal_velocity: float = 0,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        single = MountainCarEnv(goal_velocity=goal_velocity)
        super().__init__(num_envs, single, autoreset=autoreset, max_episode_steps=max_episode_steps)
        self.force: Any = single.force
        self.gravity: Any = single.gravity
        self._low = single.low
        self._high = single.high

    def _step(
        self, actions: npt.NDArray[np.integer[Any]]
    ) -> tuple[
        npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]
    ]:
        position, velocity = self.state[:, 0], self.state[:, 1]
        velocity = velocity + ((actions - 1) * self.force + np.cos(3 * position) * (-self.gravity))
        velocity = np.clip(velocity, -self.max_speed, self.max_speed)
        position = position + velocity
        position = np.clip(position, self.min_position, self.max_position)
        velocity[(position == self.min_position) & (velocity < 0)] = 0.0
        new = np.stack([position, velocity], axis=1)
        # Finished sub-envs (autoreset=False) keep their final state.
        new = keep_frozen(self.frozen, new, self.state)
        self.state = new
        terminated = (new[:, 0] >= self.goal_position) & (new[:, 1] >= self.goal_velocity)
        return (
            np.full(self.num_envs, -1.0),
            terminated,
            np.zeros(self.num_envs, dtype=bool),
            {},
        )
