"""CartPoleVecEnv: CartPole-v1 for many sub-envs at once, with array operations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.envs.classic_control.cartpole import CartPoleEnv
from sekai.envs.classic_control.vector._common import ClassicVecEnv, keep_frozen, uniform_rows

__all__ = ["CartPoleVecEnv"]

FloatArray = npt.NDArray[np.float64]


def _euler(state: FloatArray, rates: FloatArray, tau: Any) -> FloatArray:
    """Euler's update ``state + tau * rates``, computed in ``rates`` (whose columns 1 and 3 hold
    the accelerations): x + tau * x_dot for every column at once, the single env's products
    and sums."""
    rates[:, 0] = state[:, 1]
    rates[:, 2] = state[:, 3]
    step = tau if np.ndim(tau) == 0 else np.reshape(tau, (-1, 1))  # per-env tau
    new = np.multiply(step, rates, out=rates)
    new += state
    return new


def _semi_implicit(state: FloatArray, rates: FloatArray, tau: Any) -> FloatArray:
    """The semi-implicit Euler update: velocities first, then positions with the new ones."""
    new = np.empty_like(state, order="F")
    new[:, 1] = state[:, 1] + tau * rates[:, 1]
    new[:, 0] = state[:, 0] + tau * new[:, 1]
    new[:, 3] = state[:, 3] + tau * rates[:, 3]
    new[:, 2] = state[:, 2] + tau * new[:, 3]
    return new


class CartPoleVecEnv(ClassicVecEnv):
    """``num_envs`` CartPole-v1 sub-envs stepped together with array operations.

    Same dynamics, spaces, rewards and reset options as ``CartPoleEnv``: under the same states
    and actions every sub-env matches the single env bit for bit. ``state`` has shape
    ``(num_envs, 4)``; the physical constants are the single env's attributes (set one with
    ``set_attr``, or a list to give each sub-env its own value). ``steps_beyond_terminated`` is
    the single env's per sub-env (read-only).

    Args:
        num_envs: number of sub-envs.
        sutton_barto_reward: as for ``CartPoleEnv``.
        autoreset: reset finished sub-envs within the step (default), else freeze them.
        max_episode_steps: truncate every episode after this many steps (``make_vec`` passes
            the registered 500).
    """

    metadata = CartPoleEnv.metadata
    _reset_range = (-0.05, 0.05)

    def __init__(
        self,
        num_envs: int,
        *,
        sutton_barto_reward: bool = False,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        single = CartPoleEnv(sutton_barto_reward=sutton_barto_reward)
        super().__init__(num_envs, single, autoreset=autoreset, max_episode_steps=max_episode_steps)
        self._sutton_barto_reward = single._sutton_barto_reward
        self.gravity: Any = single.gravity
        self.masscart: Any = single.masscart
        self.masspole: Any = single.masspole
        self.total_mass: Any = single.total_mass
        self.length: Any = single.length
        self.polemass_length: Any = single.polemass_length
        self.force_mag: Any = single.force_mag
        self.tau: Any = single.tau
        self.kinematics_integrator = single.kinematics_integrator
        self.theta_threshold_radians: Any = single.theta_threshold_radians
        self.x_threshold: Any = single.x_threshold
        # Column-major, so each state variable is a contiguous column for the array maths.
        self.state = np.zeros((self.num_envs, 4), order="F")

    @property
    def steps_beyond_terminated(self) -> npt.NDArray[np.object_]:
        """The single env's ``steps_beyond_terminated`` per sub-env (an object array): 0 for a
        sub-env whose episode terminated and that was not reset since, None otherwise. A
        terminated sub-env is reset within the step (autoreset) or frozen until the next reset,
        so it never counts further; the value is read off the frozen sub-envs, not kept."""
        values = np.full(self.num_envs, None, dtype=object)
        values[self.frozen & self._final_terminated] = 0
        return values

    def _reset_envs(
        self, indices: npt.NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self.state[indices] = uniform_rows(self.rng, options, self._reset_range, 4)

    def _step(
        self, actions: npt.NDArray[np.integer[Any]]
    ) -> tuple[
        npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]
    ]:
        state = self.state
        theta, theta_dot = state[:, 2], state[:, 3]
        force_mag = self.force_mag
        if np.ndim(force_mag) == 0:
            force = np.array([-force_mag, force_mag]).take(actions)
        else:  # one force per sub-env, set with set_attr
            force = np.where(actions == 1, force_mag, -force_mag)
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        # The single env's expressions element-wise (same operation order, so the same
        # roundings); in-place steps only where the order allows it.
        temp = self.polemass_length * np.square(theta_dot)
        temp *= sintheta
        temp += force
        temp /= self.total_mass
        denominator = np.square(costheta)
        denominator *= self.masspole
        denominator /= self.total_mass
        np.subtract(4.0 / 3.0, denominator, out=denominator)
        denominator *= self.length
        # Columns: the time derivatives of x, x_dot, theta, theta_dot (Euler's update below).
        rates = np.empty_like(state, order="F")
        thetaacc = rates[:, 3]
        np.multiply(self.gravity, sintheta, out=thetaacc)
        thetaacc -= costheta * temp
        thetaacc /= denominator
        xacc = rates[:, 1]
        np.multiply(self.polemass_length, thetaacc, out=xacc)
        xacc *= costheta
        xacc /= self.total_mass
        np.subtract(temp, xacc, out=xacc)
        tau = self.tau
        integrator = self.kinematics_integrator
        if isinstance(integrator, str):
            if integrator == "euler":
                new = _euler(state, rates, tau)
            else:
                new = _semi_implicit(state, rates, tau)
        else:  # one integrator per sub-env, set with set_attr
            euler = np.asarray(integrator) == "euler"
            new = _semi_implicit(state, rates, tau)  # first: Euler's update overwrites rates
            if euler.any():
                new[euler] = _euler(state, rates, tau)[euler]
        if not self.autoreset:  # finished sub-envs keep their final state
            new = keep_frozen(self.frozen, new, state)
        self.state = new
        # |v| > t is exactly "v < -t or v > t", in fewer passes.
        terminated = np.abs(new[:, 0]) > self.x_threshold
        terminated |= np.abs(new[:, 2]) > self.theta_threshold_radians
        if self._sutton_barto_reward:
            rewards = np.where(terminated, -1.0, 0.0)
        else:
            rewards = np.ones(self.num_envs)
        return rewards, terminated, np.zeros(self.num_envs, dtype=bool), {}
