"""RecordPerformance: a wrapper that summarises every finished episode's performance."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.finance.metrics._recorder import (
    EpisodeRecorder,
    FinishedEpisode,
    RecordSettings,
    Summary,
    mean_fields,
)

__all__ = ["RecordPerformance"]


class RecordPerformance(ResultWrapper[Any, Any, Any, Any]):
    """Collect per-step returns and attach a summary as ``info["performance"]`` at episode end.

    Equity mode (default) reads ``info[equity_key]``; P&L mode (``pnl_key`` given) reads a
    cumulative wealth or P&L and summarises its increments with ``pnl_summary``.

    Args:
        env: the env to wrap.
        periods_per_year: annualisation; None uses ``1 / info["dt"]`` of the first info
            (252 when the env reports no ``dt``; a ``dt`` <= 0 is refused).
        equity_key: info key of the relative equity.
        pnl_key: info key of the cumulative wealth (switches to P&L mode).
        turnover_key: info key of the step's turnover, collected when an episode's infos have
            it at every step; at some steps only raises (``ValueError`` where it appears late,
            ``KeyError`` where it goes missing). None leaves it out.
        cost_key: info key of the step's cost, collected as ``turnover_key`` is.
        risk_free: annual risk-free rate for the Sharpe ratio (equity mode; a non-zero rate is
            refused with ``pnl_key``, whose P&L has no capital to earn it on).
        deque_size: how many summaries to keep.
    """

    def __init__(
        self,
        env: Env[Any, Any],
        *,
        periods_per_year: float | None = None,
        equity_key: str = "equity",
        pnl_key: str | None = None,
        turnover_key: str | None = "turnover",
        cost_key: str | None = "cost",
        risk_free: float = 0.0,
        deque_size: int = 100,
    ) -> None:
        super().__init__(env)
        settings = RecordSettings(
            periods_per_year, equity_key, pnl_key, turnover_key, cost_key, risk_free, deque_size
        )
        self.periods_per_year = settings.periods_per_year
        self.equity_key = equity_key
        self.pnl_key = pnl_key
        self.turnover_key = turnover_key
        self.cost_key = cost_key
        self.risk_free = settings.risk_free
        self.summaries = settings.summaries()
        self.last_summary: Summary | None = None
        self.last_returns: np.ndarray | None = None
        self._last_episode: FinishedEpisode | None = None  # what episode_report recomputes
        self._episode = EpisodeRecorder(settings)

    @property
    def last_periods_per_year(self) -> float:
        """The annualisation of the summaries: ``periods_per_year``, else ``1 / info["dt"]``."""
        return self._episode.periods_per_year

    def _reset_result(self, result: ResetResult[Any]) -> ResetResult[Any]:
        self._episode.begin(result.info)
        return result

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        info = result.info
        inner_reset = "final_info" in info and "reset_info" in info
        episode = self._episode
        episode.record(info["final_info"] if inner_reset else info)
        if not (result.terminated or result.truncated):
            return result
        summary, self._last_episode = episode.finish()
        self.last_returns = self._last_episode.returns
        self.summaries.append(summary)
        self.last_summary = summary
        episode.begin(info["reset_info"] if inner_reset else {})
        return StepResult(
            result.observation,
            result.reward,
            result.terminated,
            result.truncated,
            {**info, "performance": summary},
        )

    def summary(self) -> dict[str, float]:
        """Mean of every numeric field over the stored summaries."""
        return mean_fields(self.summaries)
