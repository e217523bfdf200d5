"""CartPole-v1: balance a pole on a cart (Barto, Sutton and Anderson), as gymnasium 1.x has it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai.core._rng import SeedLike
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
        seed: SeedLike = None,
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
        force_mag, polemass_length, total_mass = (
            self.force_mag,
            self.polemass_length,
            self.total_mass,
        )
        gravity, length, masspole, tau = self.gravity, self.length, self.masspole, self.tau
        x_threshold, theta_threshold = self.x_threshold, self.theta_threshold_radians
        # python_floats_exact()'s rule, written out: a call would cost a tenth of the step
        if (
            type(state) is np.ndarray
            and state.dtype is F64
            and type(force_mag) is float
            and type(polemass_length) is float
            and type(total_mass) is float
            and type(gravity) is float
            and type(length) is float
            and type(masspole) is float
            and type(tau) is float
            and type(x_threshold) is float
            and type(theta_threshold) is float
        ):
            x, x_dot, theta, theta_dot = state.tolist()
            cos: Callable[[Any], Any] = math.cos
            sin: Callable[[Any], Any] = math.sin
        else:  # NumPy scalars and functions: gymnasium's types, whatever precision they have
            x, x_dot, theta, theta_dot = np.asarray(state)
            cos, sin = np.cos, np.sin
        force = force_mag if action == 1 else -force_mag
        costheta = cos(theta)
        sintheta = sin(theta)
        temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass
        thetaacc = (gravity * sintheta - costheta * temp) / (
            length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass)
        )
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        if self.kinematics_integrator == "euler":
            x = x + tau * x_dot
            x_dot = x_dot + tau * xacc
            theta = theta + tau * theta_dot
            theta_dot = theta_dot + tau * thetaacc
        else:  # semi-implicit euler
            x_dot = x_dot + tau * xacc
            x = x + tau * x_dot
            theta_dot = theta_dot + tau * thetaacc
            theta = theta + tau * theta_dot
        state = np.array((x, x_dot, theta, theta_dot), dtype=np.float64)
        self.state = state

        terminated = bool(  # a numpy.bool when the NumPy-scalar path ran
            x < -x_threshold
            or x > x_threshold
            or theta < -theta_threshold
            or theta > theta_threshold
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
