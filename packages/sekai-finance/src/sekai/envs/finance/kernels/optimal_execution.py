"""OptimalExecutionKernel: OptimalExecution-v0 as an array kernel (the dynamics of
``OptimalExecutionVecEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance.kernels._support import (
    check_dtype_range,
    checked_env,
    env_float,
    env_int,
    float_dtype,
    int_dtype,
    merge_state,
)
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv, reward_terms, reward_values
from sekai.envs.finance.vector.optimal_execution import _DERIVED
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep

__all__ = ["OptimalExecutionKernel", "OptimalExecutionParams"]

Array = Any
State = Mapping[str, Array]


# field -> OptimalExecutionEnv keyword (the fields are named as the env's attributes)
_KEYWORDS = {
    "X0": "initial_inventory",
    "s0": "s0",
    "sigma": "sigma",
    "total_time": "total_time",
    "gamma": "permanent_impact",
    "eta": "temporary_impact",
    "epsilon": "fixed_cost",
    "risk_aversion": "risk_aversion",
    "n_steps": "n_steps",
}


@dataclass(frozen=True)
class OptimalExecutionParams:
    """Parameters of the OptimalExecution-v0 kernel, named as the env's attributes: floats as
    float64 0-d arrays (until a driver converts them), ``n_steps`` static. ``tau`` is derived
    (``total_time / n_steps``). Building one (``set_attr`` on a kernel-driven env too) checks
    the values as ``OptimalExecutionEnv`` does."""

    X0: Array
    s0: Array
    sigma: Array
    total_time: Array
    gamma: Array
    eta: Array
    epsilon: Array
    risk_aversion: Array
    n_steps: int
    tau: Array = field(init=False)

    def __post_init__(self) -> None:
        env = checked_env(self, OptimalExecutionEnv, _KEYWORDS)
        object.__setattr__(self, "tau", np.asarray(env.tau, np.float64))

    def derive(self, xp: Any) -> dict[str, Array]:
        """``tau`` again from ``total_time`` (traceable; see ``WindowParams.derive``)."""
        return {"tau": self.total_time / self.n_steps}

    @classmethod
    def of(cls, env: OptimalExecutionEnv) -> OptimalExecutionParams:
        """The params of ``env``'s parameters."""
        return cls(**{name: getattr(env, name) for name in _KEYWORDS})


class OptimalExecutionKernel(ArrayKernel[OptimalExecutionParams]):
    """``OptimalExecution-v0``'s dynamics over a leading sub-env axis, for the numpy/JAX/torch
    drivers.

    Built from ``OptimalExecutionEnv``'s keyword arguments, checked as the env checks them.
    Every step draws one normal (the mid) per sub-env, as the native env does. The state holds
    ``t``, the ``inventory`` left, the ``mid`` and the cumulative ``shortfall``.
    """

    metadata = OptimalExecutionEnv.metadata
    settable = frozenset(_KEYWORDS)
    # Worded as OptimalExecutionVecEnv refuses them.
    read_only: ClassVar[Mapping[str, str]] = {"tau": _DERIVED, "dt": _DERIVED}

    def __init__(self, **kwargs: Any) -> None:
        env = OptimalExecutionEnv(**kwargs)  # checks every argument exactly as the env does
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.params = OptimalExecutionParams.of(env)

    def check_params(self, xp: Any, params: OptimalExecutionParams, float_dtype: Any) -> None:
        """In float32 or float16: the integers within int32 and the reward's worst case within
        the dtype's range (the env checked float64)."""
        check_dtype_range(
            "OptimalExecution-v0",
            xp,
            float_dtype,
            {"n_steps": params.n_steps},
            lambda: reward_terms(params),
            lambda: reward_values(params),
        )

    def host_param(self, name: str, value: Any) -> Any:
        """A number set on a parameter as the env holds it: a float for a float parameter,
        an int for an integer one."""
        if isinstance(getattr(self.params, name, None), np.ndarray):
            return env_float(super().host_param(name, value))
        return env_int(super().host_param(name, value))

    def step_draws(self, params: OptimalExecutionParams) -> tuple[Draw, ...]:
        """The mid's normal, per sub-env."""
        return (Draw("z", "normal"),)

    def _observation(self, xp: Any, params: OptimalExecutionParams, state: State) -> Array:
        dtype = float_dtype(state["mid"])
        held = state["inventory"] / params.X0
        clock = (params.n_steps - xp.astype(state["t"], dtype)) / params.n_steps
        scale = params.sigma * xp.sqrt(params.total_time)
        moving = scale > 0
        drift = xp.where(moving, (state["mid"] - params.s0) / xp.where(moving, scale, 1.0), 0.0)
        # Clipped into the space, as the env clips after a parameter was lowered mid-episode.
        return xp.stack([xp.clip(held, 0.0, 1.0), xp.clip(clock, 0.0, 1.0), drift], axis=1)

    def reset(
        self,
        xp: Any,
        params: OptimalExecutionParams,
        draws: Mapping[str, Array],
        mask: Array,
        state: State | None,
    ) -> KernelReset:
        """New liquidations (``X0`` shares, mid ``s0``, no shortfall) where ``mask``."""
        dtype = float_dtype(params.X0)
        zeros = xp.zeros_like(mask, dtype=dtype)  # on the driver's device, as its mask
        fresh = {
            "t": xp.zeros_like(mask, dtype=int_dtype(xp, dtype)),
            "inventory": zeros + params.X0,
            "mid": zeros + params.s0,
            "shortfall": zeros,
        }
        new = merge_state(xp, mask, fresh, state)
        info = {
            "shares_sold": zeros,
            "execution_price": zeros + float("nan"),
            "inventory": fresh["inventory"],
            "mid_price": fresh["mid"],
            "implementation_shortfall": zeros,
            "shortfall_bps": zeros,
            "timestamp": zeros,
            "dt": zeros + params.tau,
        }
        return new, self._observation(xp, params, new), info

    def step(
        self,
        xp: Any,
        params: OptimalExecutionParams,
        state: State,
        action: Array,
        draws: Mapping[str, Array],
    ) -> KernelStep:
        """Sell the action's fraction of the inventory (all of it in the last period), at the
        mid less the temporary impact; the permanent impact and a normal move the mid."""
        x, mid, t = state["inventory"], state["mid"], state["t"]
        x0, s0, tau, sigma = params.X0, params.s0, params.tau, params.sigma
        fraction = xp.clip(xp.astype(action[:, 0], float_dtype(x)), 0.0, 1.0)
        sold = xp.where(t >= params.n_steps - 1, x, fraction * x)
        price = xp.where(sold > 0, mid - params.epsilon - params.eta * sold / tau, mid)
        left = x - sold
        left = xp.where(left < 1e-9 * x0, 0.0, left)
        shortfall = state["shortfall"] + sold * (s0 - price)
        new_mid = mid + (sigma * xp.sqrt(tau) * draws["z"] - params.gamma * sold)
        penalty = params.risk_aversion * sigma**2 * tau * left * left
        rewards = 1e4 * (sold * (price - s0) - penalty) / (x0 * s0)
        new_t = t + 1
        terminated = (left == 0.0) | (new_t >= params.n_steps)
        new = {"t": new_t, "inventory": left, "mid": new_mid, "shortfall": shortfall}
        info = {
            "shares_sold": sold,
            "execution_price": price,
            "inventory": left,
            "mid_price": new_mid,
            "implementation_shortfall": shortfall,
            "shortfall_bps": 1e4 * shortfall / (x0 * s0),
            "timestamp": xp.astype(new_t, float_dtype(x)) * tau,
            "dt": xp.zeros_like(x) + tau,
        }
        observation = self._observation(xp, params, new)
        return new, observation, rewards, terminated, xp.zeros_like(terminated), info
