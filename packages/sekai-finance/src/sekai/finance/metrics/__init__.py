"""Performance metrics of return and P&L series, summaries, and the record wrappers."""

from __future__ import annotations

from sekai.finance.metrics.record import RecordPerformance
from sekai.finance.metrics.returns import (
    annualized_return,
    annualized_volatility,
    calmar_ratio,
    conditional_value_at_risk,
    drawdown_series,
    equity_curve,
    hit_rate,
    max_drawdown,
    returns_from_equity,
    sharpe_ratio,
    sortino_ratio,
    total_return,
    value_at_risk,
)
from sekai.finance.metrics.summary import (
    PerformanceSummary,
    PnLSummary,
    performance_summary,
    pnl_summary,
)
from sekai.finance.metrics.vec_record import VecRecordPerformance

__all__ = [
    "PerformanceSummary",
    "PnLSummary",
    "RecordPerformance",
    "VecRecordPerformance",
    "annualized_return",
    "annualized_volatility",
    "calmar_ratio",
    "conditional_value_at_risk",
    "drawdown_series",
    "equity_curve",
    "hit_rate",
    "max_drawdown",
    "performance_summary",
    "pnl_summary",
    "returns_from_equity",
    "sharpe_ratio",
    "sortino_ratio",
    "total_return",
    "value_at_risk",
]
