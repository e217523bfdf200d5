"""TradingKernel: Trading-v0 as an array kernel (the dynamics of ``TradingVecEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance.kernels._window import WindowKernel, WindowParams
from sekai.envs.finance.trading import TradingEnv, check_positions
from sekai.envs.finance.vector._base import SHAPE
from sekai.vector.kernel import KernelReset, KernelStep

__all__ = ["TradingKernel", "TradingParams"]

Array = Any
State = Mapping[str, Array]


@dataclass(frozen=True)
class TradingParams(WindowParams):
    """Parameters of the Trading-v0 kernel: the window env's, and the target ``positions``
    ``(k,)`` the actions index."""

    positions: Array = None
    fixed_assets: ClassVar[int | None] = 1
    numbers: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        positions = np.array(check_positions(self.positions), np.float64)
        object.__setattr__(self, "positions", positions)


class TradingKernel(WindowKernel[TradingParams]):
    """``Trading-v0``'s dynamics over a leading sub-env axis, for the numpy/JAX/torch drivers.

    Built from ``TradingEnv``'s keyword arguments, checked as the env checks them. The state
    holds the drifted ``position`` and the market (``WindowKernel``); the observation is
    ``(num_envs, lookback + 1)``: the last log returns, then the position. Actions are integer
    indices into ``positions``.

    Raises:
        ValueError: an argument the kernel cannot trace (as ``PortfolioKernel``).
    """

    metadata = TradingEnv.metadata

    env_class = TradingEnv
    env_id = "Trading-v0"
    settable = frozenset({"dt", "mu", "sigma", "s0", "cost_rate"})
    read_only: ClassVar[Mapping[str, str]] = {**WindowKernel.read_only, "positions": SHAPE}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.params = TradingParams(**self._window_params(), positions=self.env.positions)

    def _n_assets(self) -> int:
        return 1

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        env = self.env
        return env.mu, env.sigma, env.s0, None

    def _equity_growth(self, params: TradingParams) -> tuple[tuple[np.ndarray, np.ndarray], str]:
        # Held at a position p, the log equity drifts p*mu - (p*sigma)**2 / 2 a year with a
        # variance of (p*sigma)**2: each position is a holding.
        positions = self.env.positions
        p = np.asarray(positions, np.float64)
        mu, sigma = np.asarray(params.mu, np.float64), np.asarray(params.sigma, np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN: refused
            variance = (p * sigma) ** 2
            drift = p * mu - 0.5 * variance
        return (drift, variance), f"positions={positions!r}"

    def _observation(self, xp: Any, state: State) -> Array:
        return xp.concat([state["window"][:, :, 0], state["position"][:, None]], axis=1)

    def reset(
        self,
        xp: Any,
        params: TradingParams,
        draws: Mapping[str, Array],
        mask: Array,
        state: State | None,
    ) -> KernelReset:
        """Flat positions at equity 1 in new windows (or paths) where ``mask``."""
        new = self.market_reset(xp, params, draws, mask, state)
        zeros = xp.zeros_like(new["equity"])
        new["position"] = zeros if state is None else xp.where(mask, zeros, state["position"])
        info = {
            "equity": new["equity"],
            "position": new["position"],
            "price": new["price"][:, 0],
            "asset_return": zeros,
            "cost": zeros,
            "turnover": zeros,
            **self.timestamp_info(xp, new, new["t"]),
            "dt": zeros + params.dt,
        }
        return new, self._observation(xp, new), info

    def step(
        self,
        xp: Any,
        params: TradingParams,
        state: State,
        action: Array,
        draws: Mapping[str, Array],
    ) -> KernelStep:
        """Trade every sub-env to its chosen target position and hold it one period."""
        target = xp.take(params.positions, xp.reshape(action, (-1,)), axis=0)
        trade = target - state["position"]
        turnover = xp.abs(trade)
        cost = self.cost(xp, params.cost_rate, trade[:, None], turnover)
        r_assets, after, window = self.market_step(xp, params, state, draws)
        r = r_assets[:, 0]
        held = 1.0 + target * r
        growth = self.net_growth(xp, cost, held, state["equity"])
        alive = (growth > 0.0) & (held > 0.0)
        position = xp.where(alive, target * (1.0 + r) / xp.where(alive, held, 1.0), 0.0)
        terminated = ~(growth > 0.0)
        rewards, account, truncated = self.book(
            xp, state, growth, turnover=turnover, cost=cost, terminated=terminated
        )
        new = {**state, **account, "price": after, "window": window, "position": position}
        info = {
            "equity": account["equity"],
            "position": position,
            "price": after[:, 0],
            "asset_return": r,
            "cost": cost,
            "turnover": turnover,
            **self.timestamp_info(xp, state, account["t"]),
            "dt": xp.zeros_like(turnover) + params.dt,
        }
        return new, self._observation(xp, new), rewards, terminated, truncated, info
