"""Acrobot-v1: swing a two-link pendulum above a line (Sutton, 1996), as gymnasium 1.x has it."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.envs.classic_control._common import (
    DiscreteAction,
    discrete_action,
    python_floats_exact,
    reset_bounds,
)
from sekai.error import ResetRequired
from sekai.spaces import Box, Discrete

__all__ = ["AcrobotConstants", "AcrobotEnv", "dsdt", "rk4", "wrap"]

pi = math.pi


class AcrobotConstants:
    """The acrobot's time step, links, speed limits and torques (gymnasium's class attributes).

    ``AcrobotEnv`` and the native ``AcrobotVecEnv`` both inherit them; ``dsdt`` reads them from
    the env it is given.
    """

    dt = 0.2
    LINK_LENGTH_1 = 1.0
    LINK_LENGTH_2 = 1.0
    LINK_MASS_1 = 1.0
    LINK_MASS_2 = 1.0
    LINK_COM_POS_1 = 0.5
    LINK_COM_POS_2 = 0.5
    LINK_MOI = 1.0
    MAX_VEL_1 = 4 * pi
    MAX_VEL_2 = 9 * pi
    AVAIL_TORQUE: ClassVar[list[float]] = [-1.0, 0.0, +1.0]
    torque_noise_max = 0.0
    book_or_nips = "book"


class AcrobotEnv(AcrobotConstants, Env[npt.NDArray[np.float32], DiscreteAction]):
    """Two links hanging from a fixed joint, actuated only at the middle joint.

    Dynamics (the "book" equations, RK4 over 0.2 s), spaces, rewards and seeding are gymnasium
    1.x's ``Acrobot-v1``, draw for draw.

    - Observation ``Box(6,)`` float32: ``cos``/``sin`` of both joint angles and both angular
      velocities.
    - Action ``Discrete(3)``: torque -1, 0 or +1 on the middle joint.
    - Reward ``-1`` per step, 0 on the terminating step.
    - Terminates when the tip rises above the line one link length above the fixed joint
      (``-cos(theta1) - cos(theta1 + theta2) > 1``); ``make()`` truncates after 500 steps.
    - Reset options ``low`` / ``high``: bounds of the uniform initial state (default +-0.1).

    The state is float32 after a reset and float64 after a step, as in gymnasium.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 15}

    def __init__(self) -> None:
        high = np.array([1.0, 1.0, 1.0, 1.0, self.MAX_VEL_1, self.MAX_VEL_2], dtype=np.float32)
        self.observation_space = Box(low=-high, high=high, dtype=np.float32)
        self.action_space = Discrete(3)
        self.state: npt.NDArray[np.floating[Any]] | None = None

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[npt.NDArray[np.float32]]:
        """Start near the bottom: every state entry uniform in ``[low, high]``."""
        self._set_rng(seed)
        low, high = reset_bounds(options, -0.1, 0.1)
        self.state = self.rng.uniform(low=low, high=high, size=(4,)).astype(np.float32)
        return ResetResult(self._get_ob(), {})

    def step(self, action: DiscreteAction) -> StepResult[npt.NDArray[np.float32]]:
        """Apply a torque to the middle joint for 0.2 s (one RK4 step)."""
        if self.state is None:
            raise ResetRequired()
        if type(action) is not int or not 0 <= action < 3:
            action = discrete_action(action, self.action_space, 3)
        torque = self.AVAIL_TORQUE[action]
        if self.torque_noise_max > 0:
            torque += self.rng.uniform(-self.torque_noise_max, self.torque_noise_max)
        state = self.state
        # The state's own dtype does not matter: gymnasium's np.append(state, torque) is
        # float64 unless the torque is a lower-precision NumPy float.
        if python_floats_exact(
            None,
            torque,
            self.dt,
            self.LINK_MASS_1,
            self.LINK_MASS_2,
            self.LINK_LENGTH_1,
            self.LINK_COM_POS_1,
            self.LINK_COM_POS_2,
            self.LINK_MOI,
            self.MAX_VEL_1,
            self.MAX_VEL_2,
        ):
            ns = rk4(self, [*np.asarray(state).tolist(), float(torque)], self.dt)
        else:  # gymnasium's NumPy scalars and functions, whatever precision they have
            ns = rk4(self, list(np.append(state, torque)), self.dt, np.cos, np.sin)
        ns[0] = wrap(ns[0], -pi, pi)
        ns[1] = wrap(ns[1], -pi, pi)
        ns[2] = min(max(ns[2], -self.MAX_VEL_1), self.MAX_VEL_1)
        ns[3] = min(max(ns[3], -self.MAX_VEL_2), self.MAX_VEL_2)
        self.state = np.array(ns, dtype=np.float64)
        terminated = -math.cos(ns[0]) - math.cos(ns[1] + ns[0]) > 1.0
        reward = -1.0 if not terminated else 0.0
        return StepResult(self._get_ob(), reward, terminated, False, {})

    def _get_ob(self) -> npt.NDArray[np.float32]:
        s = self.state
        assert s is not None
        # np.cos/np.sin on purpose: a fresh float32 state is evaluated in float32, as in gymnasium.
        return np.array(
            [np.cos(s[0]), np.sin(s[0]), np.cos(s[1]), np.sin(s[1]), s[2], s[3]], dtype=np.float32
        )


def _pow2(value: Any) -> Any:
    return value**2


def dsdt(
    env: Any,
    s: Sequence[Any],
    cos: Callable[[Any], Any] = math.cos,
    sin: Callable[[Any], Any] = math.sin,
    sq: Callable[[Any], Any] = _pow2,
) -> tuple[Any, Any, Any, Any, float]:
    """Time derivative of ``(theta1, theta2, dtheta1, dtheta2, torque)`` (gymnasium's ``_dsdt``).

    Works on Python floats (the single env) and on arrays (the native vector env, which passes
    NumPy's ``cos``/``sin`` and a ``sq`` that squares with ``pow`` as the scalars do). The
    operation order is gymnasium's, so every rounding step matches its NumPy scalars.
    """
    m1 = env.LINK_MASS_1
    m2 = env.LINK_MASS_2
    l1 = env.LINK_LENGTH_1
    lc1 = env.LINK_COM_POS_1
    lc2 = env.LINK_COM_POS_2
    I1 = env.LINK_MOI
    I2 = env.LINK_MOI
    g = 9.8
    theta1, theta2, dtheta1, dtheta2, a = s
    d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos(theta2)) + I1 + I2
    d2 = m2 * (lc2**2 + l1 * lc2 * cos(theta2)) + I2
    phi2 = m2 * lc2 * g * cos(theta1 + theta2 - pi / 2.0)
    phi1 = (
        -m2 * l1 * lc2 * sq(dtheta2) * sin(theta2)
        - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin(theta2)
        + (m1 * lc1 + m2 * l1) * g * cos(theta1 - pi / 2)
        + phi2
    )
    if env.book_or_nips == "nips":
        ddtheta2 = (a + d2 / d1 * phi1 - phi2) / (m2 * lc2**2 + I2 - sq(d2) / d1)
    else:
        ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * sq(dtheta1) * sin(theta2) - phi2) / (
            m2 * lc2**2 + I2 - sq(d2) / d1
        )
    ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0


def rk4(
    env: Any,
    y0: Sequence[Any],
    dt: float,
    cos: Callable[[Any], Any] = math.cos,
    sin: Callable[[Any], Any] = math.sin,
    sq: Callable[[Any], Any] = _pow2,
) -> list[Any]:
    """One fourth-order Runge-Kutta step of ``dsdt`` over ``[0, dt]``; the first four entries."""
    dt2 = dt / 2.0
    k1 = dsdt(env, y0, cos, sin, sq)
    k2 = dsdt(env, [y + dt2 * k for y, k in zip(y0, k1)], cos, sin, sq)
    k3 = dsdt(env, [y + dt2 * k for y, k in zip(y0, k2)], cos, sin, sq)
    k4 = dsdt(env, [y + dt * k for y, k in zip(y0, k3)], cos, sin, sq)
    return [y + dt / 6.0 * (a + 2 * b + 2 * c + d) for y, a, b, c, d in zip(y0[:4], k1, k2, k3, k4)]


def wrap(x: float, m: float, M: float) -> float:
    """Wrap ``x`` into ``[m, M]`` by whole periods ``M - m``."""
    diff = M - m
    while x > M:
        x = x - diff
    while x < m:
        x = x + diff
    return x
