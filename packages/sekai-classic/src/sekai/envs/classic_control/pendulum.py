"""Pendulum-v1: swing a pendulum up and keep it upright, as gymnasium 1.x has it."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai._box_actions import box_action, finite_float32_entry
from sekai._clip import clip
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.envs.classic_control._common import check_options, check_parameter, to_float
from sekai.error import ResetRequired
from sekai.spaces import Box

__all__ = ["PendulumEnv", "angle_normalize", "initial_high"]

DEFAULT_X = np.pi
DEFAULT_Y = 1.0


def angle_normalize(x: Any) -> Any:
    """Wrap an angle (or an array of angles) into ``[-pi, pi)``."""
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def initial_high(options: dict[str, Any] | None) -> tuple[float, float]:
    """The ``x_init`` / ``y_init`` reset options: the initial state is uniform in
    ``[-x_init, x_init] x [-y_init, y_init]``.

    Raises:
        TypeError: ``options`` is not a dict or None.
        ValueError: an option is not a number, is negative (gymnasium's draw fails there with
            NumPy's "high - low < 0"), or the range is not finite (NaN, inf, or too large to
            double; gymnasium's draw raises OverflowError there), as for the other classic
            envs' bounds.
    """
    check_options(options)
    if not options:
        return DEFAULT_X, DEFAULT_Y
    x = to_float(options["x_init"]) if "x_init" in options else DEFAULT_X
    y = to_float(options["y_init"]) if "y_init" in options else DEFAULT_Y
    if not (math.isfinite(2.0 * x) and math.isfinite(2.0 * y)):
        raise ValueError(
            f"Pendulum reset options x_init={x} and y_init={y} must give a finite initial "
            "range [-x_init, x_init] x [-y_init, y_init]."
        )
    x, y = x + 0.0, y + 0.0  # -0.0 is 0.0 (no spread): NumPy's draw refuses [0.0, -0.0]
    for name, value in (("x_init", x), ("y_init", y)):
        if value < 0:
            raise ValueError(
                f"Pendulum reset option {name}={value} must be >= 0: the initial range is "
                f"[-{name}, {name}]."
            )
    return x, y


class PendulumEnv(Env[npt.NDArray[np.float32], npt.NDArray[np.float32]]):
    """The inverted-pendulum swing-up: apply torque to bring the pendulum upright and hold it.

    Dynamics, spaces, rewards and seeding are gymnasium 1.x's ``Pendulum-v1``, draw for draw.

    - Observation ``Box(3,)`` float32: ``cos(theta)``, ``sin(theta)``, angular velocity.
    - Action ``Box(-2.0, 2.0, (1,))``: the torque; finite values outside the bounds are clipped.
    - Reward ``-(theta^2 + 0.1 * theta_dot^2 + 0.001 * torque^2)`` with theta in ``[-pi, pi)``.
    - Never terminates; ``make()`` truncates after 200 steps.
    - Reset options ``x_init`` / ``y_init``: the initial angle and angular velocity are uniform
      in ``[-x_init, x_init]`` and ``[-y_init, y_init]`` (defaults pi and 1).

    The state ``(theta, theta_dot)`` is float64, as in gymnasium.

    Args:
        g: gravitational acceleration (m/s^2).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 30}

    def __init__(self, g: float = 10.0) -> None:
        self.max_speed = 8
        self.max_torque = 2.0
        self.dt = 0.05
        self.g = check_parameter("PendulumEnv", "g", g)
        self.m = 1.0
        self.l = 1.0
        high = np.array([1.0, 1.0, self.max_speed], dtype=np.float32)
        self.action_space = Box(
            low=-self.max_torque, high=self.max_torque, shape=(1,), dtype=np.float32
        )
        self.observation_space = Box(low=-high, high=high, dtype=np.float32)
        self.state: npt.NDArray[np.float64] | None = None
        self.last_u: Any = None

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[npt.NDArray[np.float32]]:
        """Start an episode from a uniform random angle and angular velocity."""
        self._set_rng(seed)
        high = np.array(initial_high(options))
        low = -high  # symmetric limits, as gymnasium enforces
        self.state = self.rng.uniform(low=low, high=high)
        self.last_u = None
        return ResetResult(self._get_obs(), {})

    def step(self, action: npt.NDArray[np.float32]) -> StepResult[npt.NDArray[np.float32]]:
        """Apply a torque for one 0.05 s time step."""
        if self.state is None:
            raise ResetRequired()
        torque: Any = finite_float32_entry(action)
        if torque is None:
            torque = box_action(action, self.action_space, (1,))[0]
        # NumPy scalars on purpose: gymnasium mixes float32 (the torque) and float64 (the state),
        # and matching it bit for bit needs the same promotions.
        th, thdot = self.state
        g, m, l, dt = self.g, self.m, self.l, self.dt  # noqa: E741
        u = clip(torque, -self.max_torque, self.max_torque)
        self.last_u = u
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
        newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + 3.0 / (m * l**2) * u) * dt
        newthdot = clip(newthdot, -self.max_speed, self.max_speed)
        newth = th + newthdot * dt
        self.state = np.array([newth, newthdot])
        return StepResult(self._get_obs(), float(-costs), False, False, {})

    def _get_obs(self) -> npt.NDArray[np.float32]:
        assert self.state is not None
        theta, thetadot = self.state
        return np.array([np.cos(theta), np.sin(theta), thetadot], dtype=np.float32)
