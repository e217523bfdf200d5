"""TradingVecEnv: Trading-v0 for many sub-envs at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector._account import AccountVecEnv
from sekai.envs.finance.vector._base import SHAPE, param, read_only

__all__ = ["TradingVecEnv"]


class TradingVecEnv(AccountVecEnv):
    """``Trading-v0`` for ``num_envs`` sub-envs, stepped together with array operations.

    Takes every keyword of ``TradingEnv`` plus ``autoreset`` and ``max_episode_steps``; the
    parameters live on ``self.template`` (a ``TradingEnv``). Actions are an integer array
    ``(num_envs,)`` of indices into ``positions``.
    """

    single_env = TradingEnv
    state_names = ("equity", "position", "price", "timestamp", "elapsed_steps", "price_history")
    mu = param("Annual drift of the built-in GBM (shared).")
    sigma = param("Annual volatility of the built-in GBM (shared).")
    s0 = param("Initial price of the built-in GBM (shared).")
    positions = read_only(SHAPE, "The allowed target positions.")

    def _allocate_state(self) -> None:
        super()._allocate_state()
        self._targets = np.asarray(self.template.positions, dtype=np.float64)  # type: ignore[attr-defined]
        self._position = np.zeros(self.num_envs)

    def _n_columns(self) -> int:
        return 1

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        template: Any = self.template
        return template.mu, template.sigma, template.s0, None

    def _squeeze(self, rows: np.ndarray) -> np.ndarray:
        return rows[:, 0]

    # -- state ------------------------------------------------------------------------------

    @property
    def position(self) -> np.ndarray:
        """Every sub-env's drifted position."""
        result: np.ndarray = self._position.copy()
        return result

    @property
    def price(self) -> np.ndarray:
        """Every sub-env's current price."""
        self._require_episode("price")
        result: np.ndarray = self._price[:, 0].copy()
        return result

    # -- hooks --------------------------------------------------------------------------------

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self._reset_market(indices, options)
        self._position = self.replace_rows(self._position, indices, 0.0)

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        k = len(indices)
        zeros = np.zeros(k)
        return {
            "equity": np.ones(k),
            "position": zeros,
            "price": self._price[indices, 0],
            "asset_return": zeros,
            "cost": zeros,
            "turnover": zeros,
            "timestamp": self._reset_timestamps(indices),
            "dt": float(self.template.dt),  # type: ignore[attr-defined]
        }

    def _observe(self) -> np.ndarray:
        obs = np.empty((self.num_envs, self._lookback + 1), dtype=np.float32)
        obs[:, :-1] = self._return_window()[:, :, 0]
        obs[:, -1] = self._position
        return obs

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        frozen = self.frozen_mask()
        indices = actions if actions.dtype.kind in "iu" else actions.astype(np.intp)
        target = self._targets[indices]
        position = self._position
        trade = target - position
        turnover = np.abs(trade)
        cost = self._trade_cost(trade[:, None], turnover, frozen)
        r2, _, after = self._advance_market(frozen)
        r = r2[:, 0]
        held = 1.0 + target * r
        growth, equity, alive = self._settle(self._net_growth(cost, held), frozen)
        if alive:  # the usual case: nobody wiped out
            with self._quiet(frozen):
                drifted = target * (1.0 + r) / held
            terminated = np.zeros(self.num_envs, dtype=bool)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                drifted = np.where((growth > 0) & (held > 0), target * (1.0 + r) / held, 0.0)
            terminated = ~(growth > 0)
        if frozen is not None:
            drifted = np.where(frozen, position, drifted)
        self._position = drifted
        rewards, equity, truncated, t = self._book(
            growth, equity, turnover=turnover, cost=cost, terminated=terminated, frozen=frozen
        )
        infos = {
            "equity": equity,
            "position": drifted,
            "price": after[:, 0],
            "asset_return": r,
            "cost": cost,
            "turnover": turnover,
            "timestamp": self._timestamps(t),
            "dt": float(self.template.dt),  # type: ignore[attr-defined]
        }
        return rewards, terminated, truncated, infos
