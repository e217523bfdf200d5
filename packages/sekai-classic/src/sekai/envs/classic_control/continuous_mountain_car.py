"""MountainCarContinuous-v0: MountainCar with a continuous engine force, as gymnasium 1.x has it."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai._box_actions import box_action, finite_float32_entry
from sekai.core.result import StepResult
from sekai.envs.classic_control._valley import ValleyEnv
from sekai.error import ResetRequired
from sekai.spaces import Box

__all__ = ["ContinuousMountainCarEnv", "check_energy"]

_EMPTY_STATE = np.zeros(2, dtype=np.float32)


def check_energy(squared: float, action: Any, index: int | None = None) -> None:
    """Refuse an action whose square overflows the energy penalty: gymnasium fails there with
    ``OverflowError: math range error`` after changing the state; this says why, before."""
    if not math.isfinite(squared):
        where = "" if index is None else f" (sub-env {index})"
        raise OverflowError(
            f"MountainCarContinuous action {action!r}{where}: its energy penalty "
            "0.1 * action**2 overflows a float64. Actions are clipped to [-1, 1] for the "
            "dynamics, but the penalty uses the action as given."
        )


class ContinuousMountainCarEnv(ValleyEnv[npt.NDArray[np.float32]]):
    """A car in a valley with a continuous engine: reach the flag while spending little energy.

    Dynamics, spaces, rewards and seeding are gymnasium 1.x's ``MountainCarContinuous-v0``
    (``Continuous_MountainCarEnv``), draw for draw.

    - Observation ``Box(2,)`` float32: position in ``[-1.2, 0.6]``, velocity in ``[-0.07, 0.07]``.
    - Action ``Box(-1.0, 1.0, (1,))``: the engine force; a finite value outside ``[-1, 1]`` is
      clipped for the force (the energy penalty, as in gymnasium, uses the value given).
    - Reward ``-0.1 * action^2`` per step, plus 100 on reaching the goal.
    - Terminates at ``position >= 0.45`` with ``velocity >= goal_velocity``; ``make()``
      truncates after 999 steps.
    - Reset options ``low`` / ``high``: bounds of the uniform initial position (default
      ``[-0.6, -0.4]``); the initial velocity is 0.

    Args:
        goal_velocity: the minimum velocity at the goal.
    """

    _renderer_name: ClassVar[str] = "MountainCarRenderer"  # for the hint of env.render()

    def __init__(self, goal_velocity: float = 0) -> None:
        self.min_action = -1.0
        self.max_action = 1.0
        super().__init__(0.45, goal_velocity)
        self.power = 0.0015
        self.low_state = np.array([self.min_position, -self.max_speed], dtype=np.float32)
        self.high_state = np.array([self.max_position, self.max_speed], dtype=np.float32)
        self.action_space = Box(
            low=self.min_action, high=self.max_action, shape=(1,), dtype=np.float32
        )
        self.observation_space = Box(low=self.low_state, high=self.high_state, dtype=np.float32)
        self.state = None

    def step(self, action: npt.NDArray[np.float32]) -> StepResult[npt.NDArray[np.float32]]:
        """Apply an engine force for one time step."""
        if self.state is None:
            raise ResetRequired()
        push: Any = finite_float32_entry(action)
        # A float32's square cannot overflow a float64: only other actions need check_energy.
        if push is None:
            checked = box_action(action, self.action_space, (1,))
            # gymnasium steps with action[0] itself: a list's Python float rounds differently
            # from the float64 array element NumPy would make of it.
            push = action[0] if isinstance(action, (list, tuple)) else checked[0]
            check_energy(float(push) * float(push), float(push))
        # NumPy scalars on purpose: gymnasium's mix of float32 actions, a float64 first state and
        # float32 later states decides every rounding step, and this keeps it bit for bit.
        position = self.state[0]
        velocity = self.state[1]
        # min(max(push, min_action), max_action) written out: the same comparisons, no calls
        force = push
        if self.min_action > force:
            force = self.min_action
        if self.max_action < force:
            force = self.max_action

        velocity += force * self.power - 0.0025 * math.cos(3 * position)
        if velocity > self.max_speed:
            velocity = self.max_speed
        if velocity < -self.max_speed:
            velocity = -self.max_speed
        position += velocity
        if position > self.max_position:
            position = self.max_position
        if position < self.min_position:
            position = self.min_position
        if position == self.min_position and velocity < 0:
            velocity = 0

        terminated = bool(position >= self.goal_position and velocity >= self.goal_velocity)
        reward = 0.0
        if terminated:
            reward = 100.0
        reward -= math.pow(push, 2) * 0.1
        # Filling a copy casts each value to float32 as np.array([...], dtype=np.float32) does,
        # in half the time.
        state = _EMPTY_STATE.copy()
        state[0] = position
        state[1] = velocity
        self.state = state
        return StepResult(state.copy(), reward, terminated, False, {})
