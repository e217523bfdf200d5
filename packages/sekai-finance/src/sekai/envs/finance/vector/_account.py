"""The accounting of the native window envs (Trading, Portfolio): costs, equity, rewards.

``AccountVecEnv`` books every sub-env's period on the market of ``WindowVecEnv``: the cost of
its trades, its equity (checked: a wipe-out at 0, a ``ValueError`` beyond float64) and its
reward, with the cost models' context (equity, volatility, volume, spread).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance._helpers import extreme_equity
from sekai.envs.finance.vector._window import WindowVecEnv
from sekai.finance._located import priced_at
from sekai.finance.costs import ProportionalCost
from sekai.finance.rewards import period_reward

__all__ = ["AccountVecEnv"]


class AccountVecEnv(WindowVecEnv):
    """Base of ``TradingVecEnv`` and ``PortfolioVecEnv``: ``WindowVecEnv``'s market and the
    accounting they share. A step prices its trades (``_trade_cost``), advances the market
    (``_advance_market``), settles the equity (``_settle``, which commits the market) and
    books the period (``_book``)."""

    def _trade_cost(
        self, trades: np.ndarray, turnover: np.ndarray, frozen: NDArray[np.bool_] | None
    ) -> np.ndarray:
        """Every sub-env's cost of ``trades`` ``(N, n)``, whose turnover is ``turnover``.

        Frozen sub-envs trade nothing: their repeated action is not a trade, and their row of
        data may be one they never trade on (a cost model may refuse to price it there).
        """
        if frozen is not None:
            trades = np.where(frozen[:, None], 0.0, trades)
            turnover = np.where(frozen, 0.0, turnover)
        cost_model = self.template.cost_model  # type: ignore[attr-defined]
        if type(cost_model) is ProportionalCost and type(cost_model.rate) is float:
            result: np.ndarray = cost_model.rate * turnover  # the model's value, without the call
            return result
        # A C-contiguous batch, as the single env's (1, n): a user model's NumPy reductions
        # may associate differently on another memory layout.
        batch = np.ascontiguousarray(trades)
        context = self._cost_context(cost_model)
        return np.asarray(priced_at(cost_model, batch, context, self._decision), dtype=np.float64)

    @staticmethod
    def _net_growth(cost: np.ndarray, held: np.ndarray) -> np.ndarray:
        """Equity growth of the period: held growth after costs, 0 where costs take it all."""
        growth: np.ndarray = (1.0 - cost) * held
        if cost.max() >= 1.0:
            growth[cost >= 1.0] = 0.0
        return growth

    def _settle(
        self, growth: np.ndarray, frozen: NDArray[np.bool_] | None
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """The period's ``(growth, equity, alive)`` of every sub-env (frozen ones' are set back
        by ``_book``), its equity checked; then the market moves (``_commit_market``).
        ``alive``: every stepping sub-env's equity is inside ``(0, inf)``, so its growth is
        positive (nobody was wiped out: the step's usual case, which it needs not check
        again). Frozen sub-envs are left out: their period is set back, and one wiped out
        keeps its equity 0, which would send every later step down the wipe-out path; their
        growth may be <= 0 (``_quiet`` divides by it without warnings).

        Equity at 0 or below is a wipe-out: equity 0 and a growth of at most 0, which the
        reward and the positions (or weights) follow, as a growth <= 0 gives; so also where a
        positive growth underflowed the equity to 0 (the single env's ``equity_out_of_range``).
        Equity beyond float64 (inf or NaN) fails the step, which changes nothing (as a price
        beyond it does): those sub-envs wait for ``reset()``, and its ``ValueError`` names the
        first one's decision and what drives its equity. One check of the product is all a
        step costs while every equity stays inside ``(0, inf)``.
        """
        equity = self._equity * growth
        checked = equity if frozen is None else np.where(frozen, 1.0, equity)
        alive = bool(np.minimum.reduce(checked) > 0.0 and np.maximum.reduce(checked) < np.inf)
        if not alive:
            wiped = equity <= 0.0
            over = ~(wiped | (equity < np.inf))  # inf or NaN
            if frozen is not None:
                over &= ~frozen
            if over.any():
                failed = np.flatnonzero(over)
                self.await_reset(failed)
                raise self._equity_error(int(failed[0]))
            growth = np.where(wiped, np.minimum(growth, 0.0), growth)
            equity = np.where(wiped, 0.0, equity)
        self._commit_market()
        return growth, equity, alive

    @staticmethod
    def _quiet(frozen: NDArray[np.bool_] | None) -> AbstractContextManager[Any]:
        """Where sub-envs are frozen, no warning from their set-back period's arithmetic (a
        holding's growth there may be 0, which ``alive`` does not rule out)."""
        if frozen is None:
            return nullcontext()
        return np.errstate(divide="ignore", invalid="ignore")

    def _equity_error(self, index: int) -> ValueError:
        """The error for sub-env ``index``'s equity beyond float64, naming the parameters of
        its episode's built-in GBM where it simulates one (``_gbm_key``'s)."""
        gbm: tuple[Any, Any, Any] | None = None
        if self._history is None and not self._from_model[index]:
            mu, sigma, _, _, dt = self._episode_keys[self._episode_gen[index]]
            gbm = (mu, sigma, dt)
        values, remedy = self.template._equity_values(gbm)  # type: ignore[attr-defined]
        where = f"overflowed to infinity in the step {self._decision(index)}"
        return extreme_equity(type(self).__name__, where, values, remedy)

    def _book(
        self,
        growth: np.ndarray,
        equity: np.ndarray,
        *,
        turnover: np.ndarray,
        cost: np.ndarray,
        terminated: NDArray[np.bool_],
        frozen: NDArray[np.bool_] | None,
    ) -> tuple[np.ndarray, np.ndarray, NDArray[np.bool_], np.ndarray]:
        """Book the period (``_settle``'s growth and equity): ``(rewards, equity, truncated,
        t)``; frozen sub-envs keep theirs."""
        equity_before = self._equity
        t = self._advance_clock(frozen)
        if frozen is not None:
            equity = np.where(frozen, equity_before, equity)
        self._equity = equity
        rewards = period_reward(
            self.template.reward_fn,  # type: ignore[attr-defined]
            growth,
            equity=equity,
            turnover=turnover,
            cost=cost,
            previous_equity=equity_before,
        )
        truncated = t >= self._length
        if truncated.any():
            truncated &= ~terminated
        return rewards, equity, truncated, t

    # -- cost context ---------------------------------------------------------------------------

    def _cost_context(self, cost_model: Any) -> dict[str, Any]:
        requires = cost_model.requires
        if not requires:
            return {}
        context: dict[str, Any] = {}
        if "equity" in requires:
            context["equity"] = self.template.capital * self._equity  # type: ignore[attr-defined]
        history = self._history
        if "volatility" in requires:
            if history is not None:  # exact float64 returns, as the single env uses
                rows = self._start + self._decision_index()
                window = rows[:, None] + np.arange(-self._lookback, 0)
                context["volatility"] = history.log_returns[window].std(axis=1)
            else:
                context["volatility"] = self._return_window().astype(np.float64).std(axis=1)
        if history is not None and ("volume" in requires or "spread" in requires):
            row = self._start + self._decision_index()
            volume = history.field_rows("volume")
            if "volume" in requires and volume is not None:
                context["volume"] = volume[row] * history.prices[row]
            spread = history.field_rows("spread")
            if "spread" in requires and spread is not None:
                context["spread"] = spread[row]
        return context
