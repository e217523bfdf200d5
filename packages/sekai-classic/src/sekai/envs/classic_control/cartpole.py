"""CartPole-v1: balance a pole on a cart (Barto, Sutton and Anderson), as gymnasium 1.x has it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.envs.classic_control._common import (
    F64,
    DiscreteAction,
    check_flag,
    discrete_action,
    reset_bounds,
)
from sekai.error import ResetRequired
from sekai.spaces import Box, Discrete

__all__ = ["CartPoleEnv"]


class CartPoleEnv(Env[npt.NDArray[np.float32], DiscreteAction]):
    """A pole hinged on a cart that moves along a frictionless track; push the cart to balance it.

    Dynamics, spaces, rewards, termination and seeding are gymnasium 1.x's ``CartPole-v1``, draw
    for draw: the same seed and actions give the same trajectory.

    - Observation ``Box(4,)`` float32: cart position, cart velocity, pole angle, pole angular
      velocity.
    - Action ``Discrete(2)``: 0 pushes the cart left, 1 right.
    - Reward ``+1`` for every step, the terminating one included (with
      ``sutton_barto_reward=True``: 0 per step, -1 on termination).
    - Terminates when the pole leans more than 12 degrees or the cart leaves ``[-2.4, 2.4]``;
      ``make()`` truncates after 500 steps.
    - Reset options ``low`` / ``high``: bounds of the uniform initial state (default +-0.05).

    Args:
        sutton_barto_reward: use the original Sutton-Barto reward described above.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 50}

    def __init__(self, sutton_barto_reward: bool = False) -> None:
        self._sutton_barto_reward = check_flag(
            "CartPoleEnv", "sutton_barto_reward", sutton_barto_reward
        )
        self.gravity = 9.8
        self.masscart = 1.0
        self.masspole = 0.1
        self.total_mass = self.masspole + self.masscart
        self.length = 0.5  # half the pole's length
        self.polemass_length = self.masspole * self.length
        self.force_mag = 10.0
        self.tau = 0.02  # seconds between state updates
        self.kinematics_integrator = "euler"
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        # Twice the termination bounds, so a terminal observation is still inside the space.
        high = np.array(
            [self.x_threshold * 2, np.inf, self.theta_threshold_radians * 2, np.inf],
            dtype=np.float32,
        )
        self.action_space = Discrete(2)
        self.observation_space = Box(-high, high, dtype=np.float32)
        self.state: npt.NDArray[np.float64] | None = None
        self.steps_beyond_terminated: int | None = None

    def reset(
        self,
        *,
        seed: int | np.random.Generator | None = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[npt.NDArray[np.float32]]:
        """Start an episode from a uniform random state in ``[low, high]^4``."""
        self._set_rng(seed)
        low, high = reset_bounds(options, -0.05, 0.05)
        self.state = self.rng.uniform(low=low, high=high, size=(4,))
        self.steps_beyond_terminated = None
        return ResetResult(self.state.astype(np.float32), {})

    def step(self, action: DiscreteAction) -> StepResult[npt.NDArray[np.float32]]:
        """Push the cart left (0) or right (1) for one 0.02 s time step."""
        if self.state is None:
            raise ResetRequired()
        if type(action) is not int or not 0 <= action < 2:
            action = discrete_action(action, self.action_space, 2)
        # Python floats give the same IEEE results as gymnasium's NumPy scalars, much faster;
        # the expressions keep gymnasium's evaluation order so every rounding step matches.
        state = self.state
        # python_floats_exact()'s rule, written out: a call would cost a tenth of the step
        if (
            type(state) is np.ndarray
            and state.dtype is F64
            and type(self.force_mag) is float
            and type(self.polemass_length) is float
            and type(self.total_mass) is float
            and type(self.gravity) is float
            and type(self.length) is float
            and type(self.masspole) is float
            and type(self.tau) is float
            and type(self.x_threshold) is float
            and type(self.theta_threshold_radians) is float
        ):
            x, x_dot, theta, theta_dot = state.tolist()
            cos: Callable[[Any], Any] = math.cos
            sin: Callable[[Any], Any] = math.sin
        else:  # NumPy scalars and functions: gymnasium's types, whatever precision they have
            x, x_dot, theta, theta_dot = np.asarray(state)
            cos, sin = np.cos, np.sin
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = cos(theta)
        sintheta = sin(theta)
        temp = (force + self.polemass_length * (theta_dot * theta_dot) * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * (costheta * costheta) / self.total_mass)
        )
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        if self.kinematics_integrator == "euler":
            x = x + self.tau * x_dot
            x_dot = x_dot + self.tau * xacc
            theta = theta + self.tau * theta_dot
            theta_dot = theta_dot + self.tau * thetaacc
        else:  # semi-implicit euler
            x_dot = x_dot + self.tau * xacc
            x = x + self.tau * x_dot
            theta_dot = theta_dot + self.tau * thetaacc
            theta = theta + self.tau * theta_dot
        state = np.array((x, x_dot, theta, theta_dot), dtype=np.float64)
        self.state = state

        terminated = bool(  # a numpy.bool when the NumPy-scalar path ran
            x < -self.x_threshold
            or x > self.x_threshold
            or theta < -self.theta_threshold_radians
            or theta > self.theta_threshold_radians
        )
        if not terminated:
            reward = 0.0 if self._sutton_barto_reward else 1.0
        elif self.steps_beyond_terminated is None:
            self.steps_beyond_terminated = 0
            reward = -1.0 if self._sutton_barto_reward else 1.0
        else:
            # Stepping past the end is undefined behaviour in gymnasium too; keep its rewards.
            self.steps_beyond_terminated += 1
            reward = -1.0 if self._sutton_barto_reward else 0.0
        return StepResult(state.astype(np.float32), reward, terminated, False, {})
