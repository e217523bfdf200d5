"""PerformanceSummary and PnLSummary: every metric of an episode in one table."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.finance._values import check_number
from sekai.finance.metrics.returns import (
    annualized_return,
    annualized_volatility,
    calmar_ratio,
    conditional_value_at_risk,
    hit_rate,
    max_drawdown,
    periods,
    rounding_std,
    series,
    sharpe_ratio,
    sortino_ratio,
    total_return,
    value_at_risk,
)

__all__ = ["PerformanceSummary", "PnLSummary", "performance_summary", "pnl_summary"]


def _table(rows: list[tuple[str, str]]) -> str:
    left = max(len(label) for label, _ in rows)
    right = max(len(value) for _, value in rows)
    return "\n".join(f"{label:<{left}}  {value:>{right}}" for label, value in rows)


def _pct(value: float) -> str:
    return f"{value * 100:.2f}%" if np.isfinite(value) else str(value)


def _ratio(value: float) -> str:
    return f"{value:.3f}" if np.isfinite(value) else str(value)


class _Summary:
    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict, in declaration order."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]


@dataclass(frozen=True)
class PerformanceSummary(_Summary):
    """Every metric of a return series (see ``performance_summary``)."""

    n_periods: int
    total_return: float
    annualized_return: float
    annualized_volatility: float
    sharpe_ratio: float
    sortino_ratio: float
    max_drawdown: float
    calmar_ratio: float
    value_at_risk: float
    conditional_value_at_risk: float
    hit_rate: float
    mean_turnover: float | None = None
    total_cost: float | None = None

    def __str__(self) -> str:
        rows = [
            ("Periods", str(self.n_periods)),
            ("Total return", _pct(self.total_return)),
            ("Annualized return", _pct(self.annualized_return)),
            ("Annualized volatility", _pct(self.annualized_volatility)),
            ("Sharpe ratio", _ratio(self.sharpe_ratio)),
            ("Sortino ratio", _ratio(self.sortino_ratio)),
            ("Max drawdown", _pct(self.max_drawdown)),
            ("Calmar ratio", _ratio(self.calmar_ratio)),
            ("Value at risk", _pct(self.value_at_risk)),
            ("Conditional VaR", _pct(self.conditional_value_at_risk)),
            ("Hit rate", _pct(self.hit_rate)),
        ]
        if self.mean_turnover is not None:
            rows.append(("Mean turnover", f"{self.mean_turnover:.6g}"))
        if self.total_cost is not None:
            rows.append(("Total cost", f"{self.total_cost:.6g}"))
        return _table(rows)


@dataclass(frozen=True)
class PnLSummary(_Summary):
    """Metrics of a P&L process that starts at zero wealth (see ``pnl_summary``)."""

    n_periods: int
    total_pnl: float
    mean_pnl: float
    pnl_volatility: float
    sharpe_ratio: float
    max_drawdown: float
    hit_rate: float

    def __str__(self) -> str:
        return _table(
            [
                ("Periods", str(self.n_periods)),
                ("Total P&L", f"{self.total_pnl:.6g}"),
                ("Mean P&L", f"{self.mean_pnl:.6g}"),
                ("P&L volatility", f"{self.pnl_volatility:.6g}"),
                ("Sharpe ratio", _ratio(self.sharpe_ratio)),
                ("Max drawdown", f"{self.max_drawdown:.6g}"),
                ("Hit rate", _pct(self.hit_rate)),
            ]
        )


def _per_period(values: Any, name: str, returns: np.ndarray) -> np.ndarray:
    """``values`` as a series of the same periods as ``returns`` (turnover: none negative)."""
    x = series(values, name)
    if x.size != returns.size:
        raise ValueError(
            f"{name} has {x.size} values but returns has {returns.size}: {name} must give one "
            "value per period of returns."
        )
    if name == "turnover" and (x < 0).any():
        first = int(np.argmax(x < 0))
        raise ValueError(
            f"turnover must be >= 0 (the weight traded, Σ|trade|), got {float(x[first])!r} at "
            f"period {first}."
        )
    return x


def performance_summary(
    returns: Any,
    periods_per_year: float = 252,
    *,
    risk_free: float = 0.0,
    level: float = 0.95,
    turnover: Any = None,
    costs: Any = None,
) -> PerformanceSummary:
    """Compute every metric of a series of simple returns (plus mean turnover, total cost).

    ``turnover`` (>= 0) and ``costs`` (signed: a custom cost model may pay a rebate) are per
    period, one value for each return.
    """
    r = series(returns)
    ppy = periods(periods_per_year)
    mean_turnover = (
        None if turnover is None else float(np.mean(_per_period(turnover, "turnover", r)))
    )
    total_cost = None if costs is None else float(np.sum(_per_period(costs, "costs", r)))
    return PerformanceSummary(
        n_periods=int(r.size),
        total_return=total_return(r),
        annualized_return=annualized_return(r, ppy),
        annualized_volatility=annualized_volatility(r, ppy),
        sharpe_ratio=sharpe_ratio(r, ppy, risk_free),
        sortino_ratio=sortino_ratio(r, ppy, float(risk_free) / ppy),  # excess over the rate
        max_drawdown=max_drawdown(r),
        calmar_ratio=calmar_ratio(r, ppy),
        value_at_risk=value_at_risk(r, level),
        conditional_value_at_risk=conditional_value_at_risk(r, level),
        hit_rate=hit_rate(r),
        mean_turnover=mean_turnover,
        total_cost=total_cost,
    )


def pnl_summary(pnl: Any, periods_per_year: float = 252, *, scale: float = 0.0) -> PnLSummary:
    """Summarise P&L increments; ``scale`` is the wealth magnitude, for the rounding rule."""
    x = series(pnl, "pnl")
    ppy = periods(periods_per_year)
    std = rounding_std(x, scale=abs(check_number("scale", scale)))
    cumulative = np.concatenate([[0.0], np.cumsum(x)])
    drawdown = float(np.max(np.maximum.accumulate(cumulative) - cumulative))
    mean = float(np.mean(x))
    return PnLSummary(
        n_periods=int(x.size),
        total_pnl=float(np.sum(x)),
        mean_pnl=mean,
        pnl_volatility=std,
        sharpe_ratio=0.0 if std == 0.0 else float(mean / std * np.sqrt(ppy)),
        max_drawdown=drawdown,
        hit_rate=hit_rate(x),
    )
