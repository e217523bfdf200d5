"""PortfolioKernel: Portfolio-v0 as an array kernel (the dynamics of ``PortfolioVecEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._helpers import check_correlation
from sekai.envs.finance.kernels._support import float_dtype
from sekai.envs.finance.kernels._window import WindowKernel, WindowParams
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.vector._base import SHAPE
from sekai.vector.kernel import KernelReset, KernelStep

__all__ = ["PortfolioKernel", "PortfolioParams"]

Array = Any
State = Mapping[str, Array]


@dataclass(frozen=True)
class PortfolioParams(WindowParams):
    """Parameters of the Portfolio-v0 kernel: those of every window env's kernel, and the
    all-cash weights ``cash`` ``(n + 1,)`` (derived), broadcast over the sub-envs."""

    cash: Array = field(init=False)

    def __post_init__(self) -> None:
        # The env always correlates its assets: a matrix, never None (checked as it checks it).
        object.__setattr__(self, "corr", check_correlation(self.corr, int(np.size(self.s0))))
        super().__post_init__()
        cash = np.zeros(np.size(self.s0) + 1)
        cash[-1] = 1.0
        object.__setattr__(self, "cash", cash)


class PortfolioKernel(WindowKernel[PortfolioParams]):
    """``Portfolio-v0``'s dynamics over a leading sub-env axis, for the numpy/JAX/torch drivers.

    Built from ``PortfolioEnv``'s keyword arguments, checked as the env checks them. The state
    holds the drifted ``weights`` ``(num_envs, n + 1)`` (cash last) and the market
    (``WindowKernel``); the observation is ``{"returns": (num_envs, lookback, n),
    "weights": (num_envs, n + 1)}`` in the driver's float dtype.

    Raises:
        ValueError: an argument the kernel cannot trace (a ``model``, a cost model other than a
            proportional rate, a reward outside the built-in kinds, a sampler other than
            ``"random"`` with a history).
    """

    metadata = PortfolioEnv.metadata

    env_class = PortfolioEnv
    env_id = "Portfolio-v0"
    settable = frozenset({"dt", "mu", "sigma", "corr", "cost_rate"})
    read_only: ClassVar[Mapping[str, str]] = {
        **WindowKernel.read_only,
        "n_assets": SHAPE,
        "allow_short": SHAPE,
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.allow_short: bool = bool(self.env.allow_short)
        self.params = PortfolioParams(**self._window_params())

    def _n_assets(self) -> int:
        return int(self.env.n_assets)

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        env = self.env
        return env.mu, env.sigma, np.full(self.n_assets, 100.0), env.corr

    def _equity_growth(self, params: PortfolioParams) -> tuple[tuple[np.ndarray, np.ndarray], str]:
        # Weights of at most 1 in magnitude in all (none below 0 without shorts), the rest in
        # cash: the log equity drifts w.mu - v/2 a year, with w.mu at most the best mu (held,
        # or shorted: its magnitude; cash: 0), and a variance v = w'Cw of at most the
        # largest sigma**2. Every holding lies below the segment from (best, variance 0) to
        # (best - largest / 2, largest): a bound that takes diversification into account.
        mu = np.asarray(params.mu, np.float64)
        best = max(np.max(np.abs(mu) if self.allow_short else mu), 0.0)
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN: refused
            largest = np.max(np.asarray(params.sigma, np.float64)) ** 2
            drift = np.array([best, best - 0.5 * largest])
        return (drift, np.array([0.0, largest])), ""

    # -- pieces ---------------------------------------------------------------------------------

    @staticmethod
    def _cash(xp: Any, prices: Array) -> Array:
        """All-cash weights ``(num_envs, n + 1)``, shaped after ``prices`` ``(num_envs, n)``
        (``*_like``: on the driver's device)."""
        return xp.concat([xp.zeros_like(prices), xp.ones_like(prices[:, :1])], axis=1)

    def target_weights(self, xp: Any, action: Array, cash: Array) -> Array:
        """``scores_to_weights`` of a batch of actions: weights ``(num_envs, n + 1)`` (``cash``:
        the all-cash weights, ``(n + 1,)``)."""
        if self.allow_short:
            assets = xp.clip(action, -1.0, 1.0)
            gross = xp.sum(xp.abs(assets), axis=1, keepdims=True)
            assets = assets / xp.where(gross > 1.0, gross, 1.0)
            return xp.concat([assets, 1.0 - xp.sum(assets, axis=1, keepdims=True)], axis=1)
        scores = xp.clip(action, 0.0, 1.0)
        total = xp.sum(scores, axis=1, keepdims=True)
        cash_only = total < 1e-12
        return xp.where(cash_only, cash, scores / xp.where(cash_only, 1.0, total))

    def _observation(self, state: State) -> dict[str, Array]:
        return {"returns": state["window"], "weights": state["weights"]}

    # -- the kernel -----------------------------------------------------------------------------

    def reset(
        self,
        xp: Any,
        params: PortfolioParams,
        draws: Mapping[str, Array],
        mask: Array,
        state: State | None,
    ) -> KernelReset:
        """All-cash portfolios at value 1 in new windows (or paths) where ``mask``."""
        new = self.market_reset(xp, params, draws, mask, state)
        equity = new["equity"]
        cash = self._cash(xp, new["price"])
        old = None if state is None else state["weights"]
        new["weights"] = cash if old is None else xp.where(mask[:, None], cash, old)
        zeros = xp.zeros_like(equity)
        info = {
            "portfolio_value": equity,
            "equity": equity,
            "weights": new["weights"],
            "turnover": zeros,
            "cost": zeros,
            "asset_returns": xp.zeros_like(new["price"]),
            **self.timestamp_info(xp, new, new["t"]),
            "dt": zeros + params.dt,
        }
        return new, self._observation(new), info

    def step(
        self,
        xp: Any,
        params: PortfolioParams,
        state: State,
        action: Array,
        draws: Mapping[str, Array],
    ) -> KernelStep:
        """Rebalance every sub-env to its action's target weights and hold them one period."""
        equity = state["equity"]
        cash = params.cash  # (n + 1,): broadcast, not built each step
        target = self.target_weights(xp, xp.astype(action, float_dtype(equity)), cash)
        assets = target[:, :-1]
        trades = assets - state["weights"][:, :-1]
        turnover = xp.sum(xp.abs(trades), axis=1)
        cost = self.cost(xp, params.cost_rate, trades, turnover)
        r, after, window = self.market_step(xp, params, state, draws)
        growth = self.net_growth(xp, cost, 1.0 + xp.sum(assets * r, axis=1), equity)
        grown = xp.concat([assets * (r + 1.0), target[:, -1:]], axis=1)
        terminated = ~(growth > 0.0)
        total = xp.sum(grown, axis=1, keepdims=True)
        wiped = terminated[:, None]
        weights = xp.where(wiped, cash, grown / xp.where(wiped, 1.0, total))
        rewards, account, truncated = self.book(
            xp, state, growth, turnover=turnover, cost=cost, terminated=terminated
        )
        new = {
            **state,
            **account,
            "price": after,
            "window": window,
            "weights": weights,
        }
        info = {
            "portfolio_value": account["equity"],
            "equity": account["equity"],
            "weights": weights,
            "turnover": turnover,
            "cost": cost,
            "asset_returns": r,
            **self.timestamp_info(xp, state, account["t"]),
            "dt": xp.zeros_like(equity) + params.dt,
        }
        return new, self._observation(new), rewards, terminated, truncated, info
