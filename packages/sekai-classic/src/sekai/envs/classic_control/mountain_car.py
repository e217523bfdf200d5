"""MountainCar-v0: drive an underpowered car up a hill (Moore, 1990), as gymnasium 1.x has it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.core.result import StepResult
from sekai.envs.classic_control._common import (
    F64,
    DiscreteAction,
    discrete_action,
)
from sekai.envs.classic_control._valley import ValleyEnv
from sekai.error import ResetRequired
from sekai.spaces import Box, Discrete

__all__ = ["MountainCarEnv"]


class MountainCarEnv(ValleyEnv[DiscreteAction]):
    """A car in a valley, too weak to climb straight out: rock back and forth to reach the flag.

    Dynamics, spaces, rewards and seeding are gymnasium 1.x's ``MountainCar-v0``, draw for draw.

    - Observation ``Box(2,)`` float32: position in ``[-1.2, 0.6]``, velocity in ``[-0.07, 0.07]``.
    - Action ``Discrete(3)``: accelerate left (0), do nothing (1), accelerate right (2).
    - Reward ``-1`` per step.
    - Terminates at ``position >= 0.5`` with ``velocity >= goal_velocity``; ``make()``
      truncates after 200 steps.
    - Reset options ``low`` / ``high``: bounds of the uniform initial position (default
      ``[-0.6, -0.4]``); the initial velocity is 0.

    Args:
        goal_velocity: the minimum velocity at the goal.
    """

    def __init__(self, goal_velocity: float = 0) -> None:
        super().__init__(0.5, goal_velocity)
        self.force = 0.001
        self.gravity = 0.0025
        self.low = np.array([self.min_position, -self.max_speed], dtype=np.float32)
        self.high = np.array([self.max_position, self.max_speed], dtype=np.float32)
        self.action_space = Discrete(3)
        self.observation_space = Box(self.low, self.high, dtype=np.float32)
        self.state = None

    def step(self, action: DiscreteAction) -> StepResult[npt.NDArray[np.float32]]:
        """Accelerate left, not at all, or right for one time step."""
        if self.state is None:
            raise ResetRequired()
        given = action
        if type(action) is not int or not 0 <= action < 3:
            action = discrete_action(action, self.action_space, 3)
        state = self.state
        goal_velocity = type(self.goal_velocity)  # 0 by default: an int
        # python_floats_exact()'s rule, written out: a call would cost a tenth of the step
        if (
            type(state) is np.ndarray
            and state.dtype is F64
            and type(self.force) is float
            and type(self.gravity) is float
            and type(self.max_speed) is float
            and type(self.min_position) is float
            and type(self.max_position) is float
            and type(self.goal_position) is float
            and (goal_velocity is float or goal_velocity is int)
        ):
            # Python floats give the same IEEE results as gymnasium's float64 scalars, faster.
            position, velocity = state.tolist()
            velocity += (action - 1) * self.force + math.cos(3 * position) * (-self.gravity)
            velocity = min(max(velocity, -self.max_speed), self.max_speed)
            position += velocity
            position = min(max(position, self.min_position), self.max_position)
            if position == self.min_position and velocity < 0:
                velocity = 0.0
        else:
            position, velocity = self._numpy_step(state, given, action)
        terminated = position >= self.goal_position and velocity >= self.goal_velocity
        state = np.array([position, velocity])
        self.state = state
        return StepResult(state.astype(np.float32), -1.0, bool(terminated), False, {})

    def _numpy_step(self, state: Any, given: Any, action: Any) -> tuple[Any, Any]:
        """gymnasium's step with its NumPy scalar types (a float32 state or constant, or a
        NumPy action, each changes the precision it computes in). One exception: after a stop
        at the left wall gymnasium's velocity is the int 0, while it stays a float here, so
        with a NumPy float32 constant (``force``, ``gravity``) the observations may then
        differ from gymnasium's by an ulp of float32."""
        if isinstance(given, (np.integer, np.ndarray)):
            # an int64 as gymnasium's sampled actions are: np.uint8(0) - 1 would wrap to 255
            action = np.int64(action)
        position, velocity = np.asarray(state)
        velocity += (action - 1) * self.force + math.cos(3 * position) * (-self.gravity)
        velocity = np.clip(velocity, -self.max_speed, self.max_speed)
        position += velocity
        position = np.clip(position, self.min_position, self.max_position)
        if position == self.min_position and velocity < 0:
            velocity = 0
        return position, velocity
