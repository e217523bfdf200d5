"""PortfolioVecEnv: Portfolio-v0 for many sub-envs at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance.portfolio import PortfolioEnv, portfolio_return, scores_to_weights
from sekai.envs.finance.vector._base import SHAPE, param, read_only
from sekai.envs.finance.vector._window import WindowVecEnv
from sekai.finance._numeric import divide_rows, seq_sum

__all__ = ["PortfolioVecEnv"]


class PortfolioVecEnv(WindowVecEnv):
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
        self._weights = np.tile(self._cash, (self.num_envs, 1))
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
        result: np.ndarray = self._weights.copy()
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
        self._weights = self.replace_rows(self._weights, indices, self._cash)

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
        return {
            "returns": self._return_window().copy(),
            "weights": self._weights.astype(np.float32),
        }

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        frozen = self.frozen_mask()
        target = scores_to_weights(actions, self._allow_short)
        assets = target[:, :-1]
        # Whole rows (cash included) are contiguous, so NumPy runs these in one loop each;
        # the cash column is left out of the sums.
        trades_and_cash = target - self._weights
        trades = trades_and_cash[:, :-1]
        turnover = seq_sum(np.abs(trades_and_cash)[:, :-1])
        cost = self._trade_cost(trades, turnover)
        r, _, _ = self._advance_market(frozen)
        growth = self._net_growth(cost, 1.0 + portfolio_return(assets, r))
        grown = target  # the target drifts with the prices, in place: it is this step's own
        grown[:, :-1] *= 1.0 + r
        if growth.min() > 0.0:  # the usual case: nobody wiped out
            weights = divide_rows(grown, seq_sum(grown), out=grown)
            terminated = np.zeros(self.num_envs, dtype=bool)
        else:
            terminated = ~(growth > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                weights = grown / seq_sum(grown)[:, None]
            weights[terminated] = self._cash
        if frozen is not None:
            weights = np.where(frozen[:, None], self._weights, weights)
        self._weights = weights
        rewards, equity, truncated, t = self._book(
            growth, turnover=turnover, cost=cost, terminated=terminated, frozen=frozen
        )
        infos = {
            "portfolio_value": equity,
            "equity": equity,
            "weights": weights.copy(),  # each sub-env's info row is the caller's to change
            "turnover": turnover,
            "cost": cost,
            "asset_returns": r,
            "timestamp": self._timestamps(t),
            "dt": float(self.template.dt),  # type: ignore[attr-defined]
        }
        return rewards, terminated, truncated, infos
