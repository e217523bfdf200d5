"""PendulumVecEnv: Pendulum-v1 for many sub-envs at once, with array operations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control.pendulum import PendulumEnv, angle_normalize, initial_high
from sekai.envs.classic_control.vector._common import ClassicVecEnv, pow2

__all__ = ["PendulumVecEnv"]


def _per_env(value: Any) -> bool:
    """Whether a parameter holds one value per sub-env (``set_attr`` with a list)."""
    return isinstance(value, np.ndarray) and value.ndim > 0


def _square(value: Any) -> Any:
    """``value ** 2`` as the single env computes it: a parameter array element by element."""
    return pow2(value) if _per_env(value) else value**2


def _like_python_float(value: Any, array: npt.NDArray[Any]) -> Any:
    """A parameter as the single env's Python float enters arithmetic with ``array``.

    NumPy turns a Python float into a float array's dtype first (NEP 50), so the single env
    clips a float32 torque at a float32 bound and scales it by a float32 gain; one value per
    sub-env (``set_attr`` with a list, a float64 array) is rounded the same way.
    """
    if not _per_env(value) or array.dtype.kind != "f":
        return value
    return value.astype(array.dtype)


class PendulumVecEnv(ClassicVecEnv):
    """``num_envs`` Pendulum-v1 sub-envs stepped together with array operations.

    Same dynamics, spaces, rewards and reset options (``x_init`` / ``y_init``) as
    ``PendulumEnv``: under the same states and actions every sub-env matches the single env bit
    for bit, also with parameters set per sub-env (``set_attr`` with a list). ``state``
    (float64) has shape ``(num_envs, 2)``; ``last_u`` holds each sub-env's last (clipped)
    torque, NaN before its first step. ``get_attr("last_u")`` gives them as the single env holds
    its own: a NumPy scalar of the torque's dtype (the action's), None before the first step.

    Args:
        num_envs: number of sub-envs.
        g: gravitational acceleration, as for ``PendulumEnv``.
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps (``make_vec`` passes
            the registered 200; without it a pendulum episode never ends).
    """

    metadata = PendulumEnv.metadata

    def __init__(
        self,
        num_envs: int,
        *,
        g: float = 10.0,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        single = PendulumEnv(g=g)
        super().__init__(num_envs, single, autoreset=autoreset, max_episode_steps=max_episode_steps)
        self.max_speed: Any = single.max_speed
        self.max_torque: Any = single.max_torque
        self.dt: Any = single.dt
        self.g: Any = single.g
        self.m: Any = single.m
        self.l: Any = single.l
        self.state = np.zeros((self.num_envs, 2))
        self.last_u: npt.NDArray[Any] = np.full(self.num_envs, np.nan, dtype=np.float32)
        # The NumPy scalar type of each sub-env's last torque, as the single env's last_u has
        # it (None before the first step).
        self._torque_types: npt.NDArray[np.object_] = np.full(self.num_envs, None, dtype=object)

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        initial_high(options)

    def _reset_envs(
        self, indices: npt.NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        high = np.array([initial_high(option) for option in options]).reshape(-1, 2)
        # Row by row the same two draws as the single env's uniform(low=-high, high=high).
        self.state[indices] = self.rng.uniform(low=-high, high=high)
        self.last_u[indices] = np.nan
        self._torque_types[indices] = None

    def _as_single(self, name: str, values: list[Any]) -> list[Any]:
        if name != "last_u":
            return super()._as_single(name, values)
        return [
            None if kind is None or value != value else kind(value)  # NaN: no torque yet
            for value, kind in zip(values, self._torque_types.tolist(), strict=True)
        ]

    def _observe(self) -> npt.NDArray[np.float32]:
        theta = self.state[:, 0]
        obs = np.empty((self.num_envs, 3), dtype=np.float32)
        obs[:, 0] = np.cos(theta)
        obs[:, 1] = np.sin(theta)
        obs[:, 2] = self.state[:, 1]
        return obs

    def _step(
        self, actions: npt.NDArray[Any]
    ) -> tuple[
        npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]
    ]:
        th, thdot = self.state[:, 0], self.state[:, 1]
        g, m, l, dt = self.g, self.m, self.l, self.dt  # noqa: E741
        torque = actions[:, 0]
        max_torque = _like_python_float(self.max_torque, torque)
        u = np.clip(torque, -max_torque, max_torque)
        # The single env squares NumPy scalars (pow), hence pow2 rather than ** 2.
        costs = pow2(angle_normalize(th)) + 0.1 * pow2(thdot) + 0.001 * pow2(u)
        gain = _like_python_float(3.0 / (m * _square(l)), u)
        newthdot = thdot + (3 * g / (2 * l) * np.sin(th) + gain * u) * dt
        newthdot = np.clip(newthdot, -self.max_speed, self.max_speed)
        newth = th + newthdot * dt
        new = np.stack([newth, newthdot], axis=1)
        frozen = self.frozen
        if frozen.any():  # finished sub-envs (autoreset=False) keep their final state
            new[frozen] = self.state[frozen]
            self._torque_types[~frozen] = u.dtype.type
            u = np.where(frozen, self.last_u, u)
        else:
            self._torque_types[:] = u.dtype.type
        self.state = new
        if self.last_u.dtype != u.dtype:
            self.last_u = self.last_u.astype(np.result_type(self.last_u, u))
        self.last_u[:] = u
        none = np.zeros(self.num_envs, dtype=bool)
        return -costs, none, none.copy(), {}
