"""AcrobotVecEnv: Acrobot-v1 for many sub-envs at once, with array operations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control.acrobot import AcrobotConstants, AcrobotEnv, pi, rk4
from sekai.envs.classic_control.vector._common import (
    ClassicVecEnv,
    keep_frozen,
    pow2,
    uniform_rows,
)

__all__ = ["AcrobotVecEnv"]

FloatArray = npt.NDArray[np.float64]


def _wrap(x: FloatArray, m: float, M: float) -> FloatArray:
    """Element-wise ``acrobot.wrap``: whole periods subtracted one at a time, as it does."""
    diff = M - m
    while True:
        above = x > M
        if not above.any():
            break
        x = np.where(above, x - diff, x)
    while True:
        below = x < m
        if not below.any():
            break
        x = np.where(below, x + diff, x)
    return x


class AcrobotVecEnv(AcrobotConstants, ClassicVecEnv):
    """``num_envs`` Acrobot-v1 sub-envs stepped together with array operations.

    Same dynamics (RK4 of the "book" equations), spaces, rewards and reset options as
    ``AcrobotEnv``: under the same states and actions every sub-env matches the single env bit
    for bit. ``state`` has shape ``(num_envs, 4)`` (float64 storage; right after a reset its
    values are float32 values and the observation is computed in float32, as in the single env,
    and ``get_attr("state")`` gives those rows as float32 arrays).
    The link constants are the single env's class attributes (``AcrobotConstants``); ``set_attr``
    with a list gives each sub-env its own value, except ``book_or_nips`` (one for all).

    Args:
        num_envs: number of sub-envs.
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps (``make_vec`` passes
            the registered 500).
    """

    metadata = AcrobotEnv.metadata
    _reset_range = (-0.1, 0.1)
    _state_dtypes = (np.float32, np.float64)
    _one_value = frozenset({"book_or_nips"})  # selects the equations of the whole batch

    def __init__(
        self,
        num_envs: int,
        *,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        super().__init__(
            num_envs, AcrobotEnv(), autoreset=autoreset, max_episode_steps=max_episode_steps
        )
        self.state = np.zeros((self.num_envs, 4))
        # True until a sub-env's first step: its state holds float32 values, and the single env
        # computes that observation in float32.
        self._fresh = np.ones(self.num_envs, dtype=bool)

    def _reset_envs(
        self, indices: npt.NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        rows = uniform_rows(self.rng, options, self._reset_range, 4).astype(np.float32)
        self.state[indices] = rows
        self._fresh[indices] = True

    def _observe(self) -> npt.NDArray[np.float32]:
        s = self.state
        obs = np.empty((self.num_envs, 6), dtype=np.float32)
        obs[:, 0], obs[:, 1] = np.cos(s[:, 0]), np.sin(s[:, 0])
        obs[:, 2], obs[:, 3] = np.cos(s[:, 1]), np.sin(s[:, 1])
        obs[:, 4:] = s[:, 2:]
        fresh = self._fresh
        if fresh.any():
            angles = s[fresh, :2].astype(np.float32)
            obs[fresh, 0], obs[fresh, 1] = np.cos(angles[:, 0]), np.sin(angles[:, 0])
            obs[fresh, 2], obs[fresh, 3] = np.cos(angles[:, 1]), np.sin(angles[:, 1])
        return obs

    def _step(
        self, actions: npt.NDArray[np.integer[Any]]
    ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        n = self.num_envs
        torques = np.asarray(self.AVAIL_TORQUE, dtype=np.float64)
        if torques.ndim == 1:
            torque = torques.take(actions)
        else:  # one torque table per sub-env, set with set_attr
            torque = np.take_along_axis(torques, actions[:, None], axis=1)[:, 0]
        noise = self.torque_noise_max
        if not isinstance(noise, np.ndarray):
            if noise > 0:
                torque = torque + self.rng.uniform(-noise, noise, n)
        else:  # one bound per sub-env (set_attr with a list): noise where it is positive
            noisy = noise > 0
            if noisy.any():
                bound = np.where(noisy, noise, 0.0)
                torque = np.where(noisy, torque + self.rng.uniform(-bound, bound, n), torque)
        s = self.state
        y0 = [s[:, 0], s[:, 1], s[:, 2], s[:, 3], torque]
        ns = rk4(self, y0, self.dt, np.cos, np.sin, pow2)
        new = np.empty((n, 4))
        new[:, 0] = _wrap(ns[0], -pi, pi)
        new[:, 1] = _wrap(ns[1], -pi, pi)
        new[:, 2] = np.minimum(np.maximum(ns[2], -self.MAX_VEL_1), self.MAX_VEL_1)
        new[:, 3] = np.minimum(np.maximum(ns[3], -self.MAX_VEL_2), self.MAX_VEL_2)
        # Finished sub-envs (autoreset=False) keep their final state (and its class).
        frozen = self.frozen
        self.state = keep_frozen(frozen, new, s)
        self._fresh &= frozen
        terminated = -np.cos(new[:, 0]) - np.cos(new[:, 1] + new[:, 0]) > 1.0
        rewards = np.where(terminated, 0.0, -1.0)
        return rewards, terminated, np.zeros(n, dtype=bool), {}
