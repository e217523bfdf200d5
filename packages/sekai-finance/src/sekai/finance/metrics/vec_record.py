"""VecRecordPerformance: RecordPerformance for every sub-env of a VecEnv."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.metrics._recorder import (
    EpisodeRecorder,
    FinishedEpisode,
    RecordSettings,
    Summary,
    mean_fields,
)
from sekai.vector.result import VecResetResult, VecStepResult, info_at
from sekai.vector.vec_env import VecEnv
from sekai.vector.vec_wrapper import VecResultWrapper

if TYPE_CHECKING:
    from sekai.vector._contract.partial import PartialStep

__all__ = ["VecRecordPerformance"]


class VecRecordPerformance(VecResultWrapper):
    """Summarise every sub-env's finished episodes: ``infos[i]["performance"]`` when sub-env
    ``i`` ends one, read off its infos exactly as ``RecordPerformance`` reads a single env's.

    Each episode is summarised once, also without autoreset: a frozen sub-env's further steps
    are not recorded. ``summaries`` keeps the last ``deque_size`` summaries of all sub-envs in
    the order they finished; ``last_summary``, ``last_returns`` and ``last_env_index`` describe
    the latest. Reading the infos is a Python loop over the sub-envs at every step.

    Args:
        venv: the VecEnv to wrap.
        periods_per_year: annualisation; None uses ``1 / info["dt"]`` of each sub-env's first
            info (252 when the env reports no ``dt``; a ``dt`` <= 0 is refused).
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
        venv: VecEnv,
        *,
        periods_per_year: float | None = None,
        equity_key: str = "equity",
        pnl_key: str | None = None,
        turnover_key: str | None = "turnover",
        cost_key: str | None = "cost",
        risk_free: float = 0.0,
        deque_size: int = 100,
    ) -> None:
        super().__init__(venv)
        settings = RecordSettings(
            periods_per_year, equity_key, pnl_key, turnover_key, cost_key, risk_free, deque_size
        )
        self.periods_per_year = settings.periods_per_year
        self.risk_free = settings.risk_free
        self.summaries = settings.summaries()
        self.last_summary: Summary | None = None
        self.last_returns: np.ndarray | None = None
        self._last_episode: FinishedEpisode | None = None  # what episode_report recomputes
        self.last_env_index: int | None = None
        self._episodes = [EpisodeRecorder(settings) for _ in range(self.num_envs)]

    @property
    def last_periods_per_year(self) -> float:
        """The annualisation of the latest summary (of sub-env 0 before any)."""
        index = 0 if self.last_env_index is None else self.last_env_index
        return self._episodes[index].periods_per_year

    _step_reads_live = True

    def _rewrite_reset(self, result: VecResetResult[Any]) -> VecResetResult[Any]:
        for i, episode in enumerate(self._episodes):  # an unfinished episode is dropped
            episode.begin(info_at(result, i))
        return result

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        dones = result.terminated | result.truncated
        stepped = range(self.num_envs) if live is None else np.flatnonzero(live).tolist()
        for i in stepped:
            info = info_at(result, i)
            inner_reset = "final_info" in info and "reset_info" in info
            episode = self._episodes[i]
            episode.record(info["final_info"] if inner_reset else info)
            if dones[i]:
                summary, self._last_episode = episode.finish()
                self.last_returns = self._last_episode.returns
                self.summaries.append(summary)
                self.last_summary, self.last_env_index = summary, i
                info["performance"] = summary
                episode.begin(info["reset_info"] if inner_reset else {})
        return result

    def _on_failed_step(self, partial: PartialStep) -> None:
        for i in np.flatnonzero(partial.ended).tolist():  # its end was lost with the failed call
            self._episodes[i].begin({})

    def summary(self) -> dict[str, float]:
        """Mean of every numeric field over the stored summaries."""
        return mean_fields(self.summaries)
