"""RecordPerformance: a wrapper that summarises every finished episode's performance."""

from __future__ import annotations

import numbers
from collections import deque
from dataclasses import fields
from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import Wrapper
from sekai.finance.metrics.summary import (
    PerformanceSummary,
    PnLSummary,
    performance_summary,
    pnl_summary,
)

__all__ = ["RecordPerformance"]


def _key(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        allowed = "a str or None" if optional else "a str"
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__}.")


def _read(info: dict[str, Any], key: str) -> float:
    if key not in info:
        raise KeyError(f"info has no {key!r}; available keys: {sorted(map(str, info))}")
    value = info[key]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)):
        raise TypeError(f"info[{key!r}] must be a number, got {type(value).__name__}.")
    number = float(value)
    if not np.isfinite(number):
        raise ValueError(f"info[{key!r}] must be finite, got {number}.")
    return number


class RecordPerformance(Wrapper[Any, Any, Any, Any]):
    """Collect per-step returns and attach a summary as ``info["performance"]`` at episode end.

    Equity mode (default) reads ``info[equity_key]``; P&L mode (``pnl_key`` given) reads a
    cumulative wealth or P&L and summarises its increments with ``pnl_summary``.

    Args:
        env: the env to wrap.
        periods_per_year: annualisation; None uses ``1 / info["dt"]`` of the first info
            (252 when the env reports no ``dt``).
        equity_key: info key of the relative equity.
        pnl_key: info key of the cumulative wealth (switches to P&L mode).
        turnover_key: info key of the step's turnover (collected when present).
        cost_key: info key of the step's cost (collected when present).
        risk_free: annual risk-free rate for the Sharpe ratio.
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
        _key("equity_key", equity_key, optional=False)
        _key("pnl_key", pnl_key, optional=True)
        _key("turnover_key", turnover_key, optional=True)
        _key("cost_key", cost_key, optional=True)
        if isinstance(deque_size, bool) or not isinstance(deque_size, int) or deque_size < 1:
            raise ValueError(f"deque_size must be a positive int, got {deque_size!r}.")
        if periods_per_year is not None and (
            isinstance(periods_per_year, bool)
            or not isinstance(periods_per_year, numbers.Real)
            or not periods_per_year > 0
        ):
            raise ValueError(f"periods_per_year must be > 0, got {periods_per_year!r}.")
        self.periods_per_year = periods_per_year
        self.equity_key = equity_key
        self.pnl_key = pnl_key
        self.turnover_key = turnover_key
        self.cost_key = cost_key
        self.risk_free = float(risk_free)
        self.summaries: deque[PerformanceSummary | PnLSummary] = deque(maxlen=deque_size)
        self.last_summary: PerformanceSummary | PnLSummary | None = None
        self.last_returns: np.ndarray | None = None
        self._ppy: float | None = None if periods_per_year is None else float(periods_per_year)
        self._begin({})

    # -- episode bookkeeping -------------------------------------------------------------

    def _begin(self, info: dict[str, Any]) -> None:
        self._returns: list[float] = []
        self._turnover: list[float] = []
        self._costs: list[float] = []
        self._scale = 0.0
        self._dead = False
        if self._ppy is None and "dt" in info:
            dt = float(info["dt"])
            self._ppy = 1.0 / dt if dt > 0 else None
        if self.pnl_key is not None:
            self._last = _read(info, self.pnl_key) if self.pnl_key in info else 0.0
            self._scale = abs(self._last)
        else:
            self._last = _read(info, self.equity_key) if self.equity_key in info else 1.0

    def _record(self, info: dict[str, Any]) -> None:
        if self.pnl_key is not None:
            value = _read(info, self.pnl_key)
            self._returns.append(value - self._last)
            self._scale = max(self._scale, abs(value))
            self._last = value
        else:
            equity = _read(info, self.equity_key)
            if self._dead:
                self._returns.append(0.0)
            elif equity <= 0 or self._last <= 0:
                self._returns.append(-1.0)
                self._dead = True
            else:
                self._returns.append(equity / self._last - 1.0)
            self._last = equity
            if self.turnover_key is not None and self.turnover_key in info:
                self._turnover.append(_read(info, self.turnover_key))
            if self.cost_key is not None and self.cost_key in info:
                self._costs.append(_read(info, self.cost_key))

    def _finish(self) -> PerformanceSummary | PnLSummary:
        ppy = self._ppy if self._ppy is not None else 252.0
        returns = np.asarray(self._returns, dtype=np.float64)
        summary: PerformanceSummary | PnLSummary
        if self.pnl_key is not None:
            summary = pnl_summary(returns, ppy, scale=self._scale)
        else:
            summary = performance_summary(
                returns,
                ppy,
                risk_free=self.risk_free,
                turnover=self._turnover or None,
                costs=self._costs or None,
            )
        self.summaries.append(summary)
        self.last_summary = summary
        self.last_returns = returns
        return summary

    def _after_reset(self, result: ResetResult[Any]) -> ResetResult[Any]:
        self._begin(result.info)
        return result

    def _after_step(self, result: StepResult[Any]) -> StepResult[Any]:
        info = result.info
        inner_reset = "final_info" in info and "reset_info" in info
        self._record(info["final_info"] if inner_reset else info)
        if not (result.terminated or result.truncated):
            return result
        summary = self._finish()
        self._begin(info["reset_info"] if inner_reset else {})
        return StepResult(
            result.observation,
            result.reward,
            result.terminated,
            result.truncated,
            {**info, "performance": summary},
        )

    # -- Env API ------------------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | np.random.Generator | None = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Any]:
        return self._after_reset(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> StepResult[Any]:
        return self._after_step(self.env.step(action))

    async def async_reset(
        self,
        *,
        seed: int | np.random.Generator | None = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[Any]:
        return self._after_reset(await self.env.async_reset(seed=seed, options=options))

    async def async_step(self, action: Any) -> StepResult[Any]:
        return self._after_step(await self.env.async_step(action))

    def summary(self) -> dict[str, float]:
        """Mean of every numeric field over the stored summaries."""
        if not self.summaries:
            return {}
        result: dict[str, float] = {}
        for field in fields(self.summaries[0]):
            values = [getattr(s, field.name) for s in self.summaries]
            numbers_only = [v for v in values if v is not None]
            if numbers_only:
                result[field.name] = float(np.mean(numbers_only))
        return result
