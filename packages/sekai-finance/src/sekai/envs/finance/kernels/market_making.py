"""MarketMakingKernel: MarketMaking-v0 as an array kernel (the dynamics of
``MarketMakingVecEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance.kernels._support import (
    at_least,
    at_most,
    check_dtype_range,
    checked_env,
    env_float,
    env_int,
    float_dtype,
    int_dtype,
    merge_state,
)
from sekai.envs.finance.market_making import MarketMakingEnv, reward_terms, reward_values
from sekai.envs.finance.vector.market_making import _BOUNDS, _DERIVED
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep

__all__ = ["MarketMakingKernel", "MarketMakingParams"]

Array = Any
State = Mapping[str, Array]


# field -> MarketMakingEnv keyword (the fields are named as the env's attributes)
_KEYWORDS = {
    "s0": "s0",
    "sigma": "sigma",
    "total_time": "total_time",
    "A": "fill_intensity",
    "k": "fill_decay",
    "risk_aversion": "risk_aversion",
    "terminal_penalty": "terminal_penalty",
    "max_offset": "max_offset",
    "max_inventory": "max_inventory",
    "order_size": "order_size",
    "n_steps": "n_steps",
}


@dataclass(frozen=True)
class MarketMakingParams:
    """Parameters of the MarketMaking-v0 kernel, named as the env's attributes: floats as
    float64 0-d arrays (until a driver converts them), the integers static. ``dt`` is derived
    (``total_time / n_steps``). Building one (``set_attr`` on a kernel-driven env too) checks
    the values as ``MarketMakingEnv`` does."""

    s0: Array
    sigma: Array
    total_time: Array
    A: Array
    k: Array
    risk_aversion: Array
    terminal_penalty: Array
    max_offset: Array
    max_inventory: int
    order_size: int
    n_steps: int
    dt: Array = field(init=False)

    def __post_init__(self) -> None:
        env = checked_env(self, MarketMakingEnv, _KEYWORDS)
        object.__setattr__(self, "dt", np.asarray(env.dt, np.float64))

    def derive(self, xp: Any) -> dict[str, Array]:
        """``dt`` again from ``total_time`` (traceable; see ``WindowParams.derive``)."""
        return {"dt": self.total_time / self.n_steps}

    @classmethod
    def of(cls, env: MarketMakingEnv) -> MarketMakingParams:
        """The params of ``env``'s parameters."""
        return cls(**{name: getattr(env, name) for name in _KEYWORDS})


class MarketMakingKernel(ArrayKernel[MarketMakingParams]):
    """``MarketMaking-v0``'s dynamics over a leading sub-env axis, for the numpy/JAX/torch drivers.

    Built from ``MarketMakingEnv``'s keyword arguments, checked as the env checks them. Every
    step draws two uniforms (the bid's and the ask's fill) and one normal (the mid) per sub-env,
    as the native env does. The state holds ``t``, ``mid``, ``inventory`` (integers), ``cash``
    and the last step's ``bid``/``ask`` and fills.
    """

    metadata = MarketMakingEnv.metadata
    settable = frozenset(_KEYWORDS) - {"max_offset"}
    # Worded as MarketMakingVecEnv refuses them.
    read_only: ClassVar[Mapping[str, str]] = {"max_offset": _BOUNDS, "dt": _DERIVED}

    def __init__(self, **kwargs: Any) -> None:
        env = MarketMakingEnv(**kwargs)  # checks every argument exactly as the env does
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.params = MarketMakingParams.of(env)

    def check_params(self, xp: Any, params: MarketMakingParams, float_dtype: Any) -> None:
        """In float32 or float16: the integers within int32 and the reward's worst case within
        the dtype's range (the env checked float64)."""
        check_dtype_range(
            "MarketMaking-v0",
            xp,
            float_dtype,
            {"max_inventory": params.max_inventory, "n_steps": params.n_steps},
            lambda: reward_terms(params),
            lambda: reward_values(params),
        )

    def host_param(self, name: str, value: Any) -> Any:
        """A number set on a parameter as the env holds it: a float for a float parameter,
        an int for an integer one."""
        if isinstance(getattr(self.params, name, None), np.ndarray):
            return env_float(super().host_param(name, value))
        return env_int(super().host_param(name, value))

    def step_draws(self, params: MarketMakingParams) -> tuple[Draw, ...]:
        """Two fill uniforms (bid, ask) and the mid's normal, per sub-env."""
        return (Draw("u", "uniform", (2,)), Draw("z", "normal"))

    def _observation(self, xp: Any, params: MarketMakingParams, state: State) -> Array:
        dtype = float_dtype(state["mid"])
        held = xp.astype(state["inventory"], dtype) / params.max_inventory
        clock = (params.n_steps - xp.astype(state["t"], dtype)) / params.n_steps
        # Into the space, as the env clips (a lowered n_steps or max_inventory would leave it).
        return xp.stack([xp.clip(held, -1.0, 1.0), xp.clip(clock, 0.0, 1.0)], axis=1)

    def reset(
        self,
        xp: Any,
        params: MarketMakingParams,
        draws: Mapping[str, Array],
        mask: Array,
        state: State | None,
    ) -> KernelReset:
        """New sessions (mid ``s0``, flat, no cash, no quotes yet) where ``mask``."""
        dtype = float_dtype(params.s0)
        # *_like of the driver's mask: new arrays on its device (torch: CPU otherwise).
        zeros = xp.zeros_like(mask, dtype=dtype)
        integers = xp.zeros_like(mask, dtype=int_dtype(xp, dtype))
        unfilled = xp.zeros_like(mask)
        fresh = {
            "t": integers,
            "mid": zeros + params.s0,
            "inventory": integers,
            "cash": zeros,
            "bid": zeros + float("nan"),
            "ask": zeros + float("nan"),
            "bid_filled": unfilled,
            "ask_filled": unfilled,
        }
        new = merge_state(xp, mask, fresh, state)
        info = {
            "mid_price": fresh["mid"],
            "inventory": integers,
            "cash": zeros,
            "wealth": zeros,
            "bid": fresh["bid"],
            "ask": fresh["ask"],
            "bid_filled": unfilled,
            "ask_filled": unfilled,
            "timestamp": zeros,
            "dt": zeros + params.dt,
        }
        return new, self._observation(xp, params, new), info

    def step(
        self,
        xp: Any,
        params: MarketMakingParams,
        state: State,
        action: Array,
        draws: Mapping[str, Array],
    ) -> KernelStep:
        """Quote, fill with the fill probabilities, move the mid; reward the wealth change less
        the inventory penalties (as ``MarketMakingEnv.step``)."""
        q, mid, cash = state["inventory"], state["mid"], state["cash"]
        dtype = float_dtype(mid)
        size, limit, dt, sigma = params.order_size, params.max_inventory, params.dt, params.sigma
        # Not clip(x, 0.0, max_offset): clip with a number and a tensor copies the number to the
        # device (array-api-compat), a synchronising copy that a CUDA graph refuses.
        offsets = at_most(xp, at_least(xp, xp.astype(action, dtype), 0.0), params.max_offset)
        fill = -xp.expm1(-params.A * xp.exp(-params.k * offsets) * dt)
        filled = draws["u"] < fill
        bid_filled = filled[:, 0] & (q <= limit - size)  # q + size could wrap (as the env)
        ask_filled = filled[:, 1] & (q >= size - limit)
        bid = mid - offsets[:, 0]
        ask = mid + offsets[:, 1]
        new_q = q + size * (xp.astype(bid_filled, q.dtype) - xp.astype(ask_filled, q.dtype))
        new_cash = cash - xp.where(bid_filled, size * bid, 0.0)
        new_cash = new_cash + xp.where(ask_filled, size * ask, 0.0)
        move = sigma * xp.sqrt(dt) * draws["z"]
        new_mid = mid + move
        held = xp.astype(new_q, dtype)
        wealth = new_cash + held * new_mid
        # The wealth change, new wealth - old wealth, summed from its small parts (the held
        # inventory's move and each fill's edge over the new mid): no cancellation of two large
        # wealths, which float32 would leave with an error of the mid's order.
        rewards = xp.astype(q, dtype) * move
        rewards = rewards + xp.where(bid_filled, size * (offsets[:, 0] + move), 0.0)
        rewards = rewards + xp.where(ask_filled, size * (offsets[:, 1] - move), 0.0)
        rewards = rewards - 0.5 * params.risk_aversion * sigma**2 * dt * held * held
        t = state["t"] + 1
        terminated = t >= params.n_steps
        rewards = rewards - xp.where(terminated, params.terminal_penalty * held * held, 0.0)
        new = {
            "t": t,
            "mid": new_mid,
            "inventory": new_q,
            "cash": new_cash,
            "bid": bid,
            "ask": ask,
            "bid_filled": bid_filled,
            "ask_filled": ask_filled,
        }
        info = {
            "mid_price": new_mid,
            "inventory": new_q,
            "cash": new_cash,
            "wealth": wealth,
            "bid": bid,
            "ask": ask,
            "bid_filled": bid_filled,
            "ask_filled": ask_filled,
            "timestamp": xp.astype(t, dtype) * dt,
            "dt": xp.zeros_like(mid) + dt,
        }
        observation = self._observation(xp, params, new)
        return new, observation, rewards, terminated, xp.zeros_like(terminated), info
