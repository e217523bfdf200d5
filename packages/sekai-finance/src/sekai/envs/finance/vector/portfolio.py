"""PortfolioVecEnv: Portfolio-v0 for many sub-envs at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance.portfolio import PortfolioEnv, portfolio_return, scores_to_weights
from sekai.envs.finance.vector._account import AccountVecEnv
from sekai.envs.finance.vector._base import SHAPE, param, read_only
from sekai.finance._numeric import divide_along, seq_sum

__all__ = ["PortfolioVecEnv"]


class PortfolioVecEnv(AccountVecEnv):
    """``Portfolio-v0`` for ``num_envs`` sub-envs, stepped together with array operations.

    Takes every keyword of ``PortfolioEnv`` plus ``autoreset`` and ``max_episode_steps``; the
    parameters live on ``self.template`` (a ``PortfolioEnv``). Actions are ``(num_envs, n + 1)``
    scores (``(num_envs, n)`` target weights with ``allow_short``).
    """

    single_env = PortfolioEnv
    state_names = (
        "weights",
        "portfolio_value",
        "equity",
        "price",
        "timestamp",
        "elapsed_steps",
        "price_history",
    )
    mu = param("Annual drift(s) of the built-in GBM (shared).")
    sigma = param("Annual volatilities of the built-in GBM (shared).")
    corr = param("Correlation matrix of the built-in GBM (shared).")
    n_assets = read_only(SHAPE, "Number of assets.")
    allow_short = read_only(SHAPE, "Whether the action space allows shorts.")

    def _allocate_state(self) -> None:
        super()._allocate_state()
        template: Any = self.template
        self._allow_short = bool(template.allow_short)
        self._cash = np.zeros(self._width + 1)
        self._cash[-1] = 1.0
        # Asset-major (n + 1, num_envs): every per-asset term of a step is one contiguous row
        # (see sekai.finance._numeric); the weights property gives (num_envs, n + 1).
        self._weights = np.tile(self._cash[:, None], (1, self.num_envs))
        # (self._weights, its (num_envs, n + 1) copy) from the last step, for _observe
        self._weight_rows: tuple[np.ndarray, np.ndarray] | None = None
        self._s0 = np.full(self._width, 100.0)

    def _n_columns(self) -> int:
        return int(self.template.n_assets)  # type: ignore[attr-defined]

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        template: Any = self.template
        return template.mu, template.sigma, self._s0, template.corr

    # -- state ------------------------------------------------------------------------------

    @property
    def weights(self) -> np.ndarray:
        """Every sub-env's drifted weights ``(num_envs, n + 1)``, cash last."""
        result: np.ndarray = self._weights.T.copy()
        return result

    @property
    def portfolio_value(self) -> np.ndarray:
        """Every sub-env's value relative to its episode start (same as ``equity``)."""
        result: np.ndarray = self._equity.copy()
        return result

    @property
    def price(self) -> np.ndarray:
        """Every sub-env's current prices ``(num_envs, n)``."""
        self._require_episode("price")
        result: np.ndarray = self._price.copy()
        return result

    def action_to_weights(self, actions: Any) -> np.ndarray:
        """Target weights ``(num_envs, n + 1)`` of a batch of actions.

        Raises:
            ValueError: a batch of the wrong shape.
            sekai.InvalidAction: a NaN or infinite entry.
        """
        checked = self._action_checker().check(actions)
        return scores_to_weights(np.asarray(checked, dtype=np.float64), self._allow_short)

    # -- hooks --------------------------------------------------------------------------------

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self._reset_market(indices, options)
        weights = self._weights.copy()  # infos may hold the old array
        weights[:, indices] = self._cash[:, None]
        self._weights = weights

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        k = len(indices)
        return {
            "portfolio_value": np.ones(k),
            "equity": np.ones(k),
            "weights": np.tile(self._cash, (k, 1)),
            "turnover": np.zeros(k),
            "cost": np.zeros(k),
            "asset_returns": np.zeros((k, self._width)),
            "timestamp": self._reset_timestamps(indices),
            "dt": float(self.template.dt),  # type: ignore[attr-defined]
        }

    def _observe(self) -> dict[str, np.ndarray]:
        cached, self._weight_rows = self._weight_rows, None  # used once, before the caller
        if cached is not None and cached[0] is self._weights:  # (a reset replaces the array)
            weights = cached[1].astype(np.float32)  # a contiguous cast beats a transposing one
        else:
            weights = np.ascontiguousarray(self._weights.T, dtype=np.float32)
        return {"returns": self._return_window().copy(), "weights": weights}

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        frozen = self.frozen_mask()
        # Asset-major (n + 1, N) from here on; the cash row is left out of the sums.
        target = scores_to_weights(actions.T, self._allow_short, axis=0)
        assets = target[:-1]
        trades = assets - self._weights[:-1]
        turnover = seq_sum(np.abs(trades), 0)
        cost = self._trade_cost(trades.T, turnover, frozen)
        r, _, _ = self._advance_market(frozen)
        r_rows = np.array(r.T, order="C")  # a copy even when r.T is contiguous: r is an info
        held = 1.0 + portfolio_return(assets, r_rows, axis=0)
        growth, equity, alive = self._settle(self._net_growth(cost, held), frozen)
        grown = target  # the target drifts with the prices, in place: it is this step's own
        r_rows += 1.0
        assets *= r_rows
        if alive:  # the usual case: nobody wiped out
            with self._quiet(frozen):
                weights = divide_along(grown, seq_sum(grown, 0), 0, out=grown)
            terminated = np.zeros(self.num_envs, dtype=bool)
        else:
            terminated = ~(growth > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                weights = divide_along(grown, seq_sum(grown, 0), 0)
            weights[:, terminated] = self._cash[:, None]
        if frozen is not None:
            weights = np.where(frozen, self._weights, weights)
        self._weights = weights
        rows = weights.T.copy()
        self._weight_rows = (weights, rows)
        rewards, equity, truncated, t = self._book(
            growth, equity, turnover=turnover, cost=cost, terminated=terminated, frozen=frozen
        )
        infos = {
            "portfolio_value": equity,
            "equity": equity,
            "weights": rows,  # a copy: each sub-env's info row is the caller's to change
            "turnover": turnover,
            "cost": cost,
            "asset_returns": r,
            "timestamp": self._timestamps(t),
            "dt": float(self.template.dt),  # type: ignore[attr-defined]
        }
        return rewards, terminated, truncated, infos
