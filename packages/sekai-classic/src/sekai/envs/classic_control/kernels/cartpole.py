"""CartPoleKernel: CartPole-v1's dynamics as pure array functions (numpy, JAX, torch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sekai.envs.classic_control.cartpole import CartPoleEnv
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep

__all__ = ["CartPoleKernel", "CartPoleParams"]

_NAMES = ("x", "x_dot", "theta", "theta_dot")


@dataclass(frozen=True)
class CartPoleParams:
    """CartPole's constants (the single env's attributes) and its reset bounds."""

    gravity: float
    masspole: float
    total_mass: float
    length: float
    polemass_length: float
    force_mag: float
    tau: float
    theta_threshold_radians: float
    x_threshold: float
    reset_low: float = -0.05
    reset_high: float = 0.05
    kinematics_integrator: str = "euler"
    sutton_barto_reward: bool = False


class CartPoleKernel(ArrayKernel[CartPoleParams]):
    """CartPole-v1 for a batch of sub-envs: the expressions of ``CartPoleVecEnv`` in the same
    order, so that the numpy driver matches the native env bit for bit.

    Args:
        sutton_barto_reward: as for ``CartPoleEnv``.
    """

    metadata = CartPoleEnv.metadata

    def __init__(self, sutton_barto_reward: bool = False) -> None:
        single = CartPoleEnv(sutton_barto_reward=sutton_barto_reward)
        self.observation_space = single.observation_space
        self.action_space = single.action_space
        self.params = CartPoleParams(
            gravity=single.gravity,
            masspole=single.masspole,
            total_mass=single.total_mass,
            length=single.length,
            polemass_length=single.polemass_length,
            force_mag=single.force_mag,
            tau=single.tau,
            theta_threshold_radians=single.theta_threshold_radians,
            x_threshold=single.x_threshold,
            kinematics_integrator=single.kinematics_integrator,
            sutton_barto_reward=single._sutton_barto_reward,
        )

    def reset_draws(self, params: CartPoleParams) -> tuple[Draw, ...]:
        return (Draw("state", "uniform", (4,)),)

    def reset(
        self,
        xp: Any,
        params: CartPoleParams,
        draws: Mapping[str, Any],
        mask: Any,
        state: Mapping[str, Any] | None,
    ) -> KernelReset:
        # numpy's uniform(low, high) is low + (high - low) * u: the same roundings.
        fresh = params.reset_low + (params.reset_high - params.reset_low) * draws["state"]
        new = {name: fresh[:, i] for i, name in enumerate(_NAMES)}
        if state is not None:
            new = {name: xp.where(mask, new[name], state[name]) for name in _NAMES}
        return new, self._observe(xp, new), {}

    @staticmethod
    def _observe(xp: Any, state: Mapping[str, Any]) -> Any:
        return xp.stack([state[name] for name in _NAMES], axis=1)

    def step(
        self,
        xp: Any,
        params: CartPoleParams,
        state: Mapping[str, Any],
        action: Any,
        draws: Mapping[str, Any],
    ) -> KernelStep:
        p = params
        x, x_dot, theta, theta_dot = (state[name] for name in _NAMES)
        force = xp.where(action == 1, p.force_mag, -p.force_mag)
        costheta = xp.cos(theta)
        sintheta = xp.sin(theta)
        temp = (p.polemass_length * (theta_dot * theta_dot) * sintheta + force) / p.total_mass
        denominator = p.length * (4.0 / 3.0 - (costheta * costheta) * p.masspole / p.total_mass)
        thetaacc = (p.gravity * sintheta - costheta * temp) / denominator
        xacc = temp - p.polemass_length * thetaacc * costheta / p.total_mass
        if p.kinematics_integrator == "euler":
            new = {
                "x": p.tau * x_dot + x,
                "x_dot": p.tau * xacc + x_dot,
                "theta": p.tau * theta_dot + theta,
                "theta_dot": p.tau * thetaacc + theta_dot,
            }
        else:  # semi-implicit euler
            new_x_dot = x_dot + p.tau * xacc
            new_theta_dot = theta_dot + p.tau * thetaacc
            new = {
                "x": x + p.tau * new_x_dot,
                "x_dot": new_x_dot,
                "theta": theta + p.tau * new_theta_dot,
                "theta_dot": new_theta_dot,
            }
        terminated = (xp.abs(new["x"]) > p.x_threshold) | (
            xp.abs(new["theta"]) > p.theta_threshold_radians
        )
        ones = xp.ones_like(x)
        reward = xp.where(terminated, -ones, 0.0 * ones) if p.sutton_barto_reward else ones
        truncated = xp.zeros_like(terminated)
        return new, self._observe(xp, new), reward, terminated, truncated, {}
