"""PerformanceSummary and PnLSummary."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance import metrics as m
from sekai.finance.metrics import performance_summary, pnl_summary


def test_performance_summary_fields_and_table():
    summary = performance_summary([0.01, -0.02, 0.03], turnover=[1.0, 0.0, 0.5], costs=[0.001] * 3)
    assert summary.n_periods == 3 and summary.mean_turnover == 0.5
    assert summary.total_cost == pytest.approx(0.003)
    text = str(summary)
    assert "Total return" in text and "%" in text and "Mean turnover" in text
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1  # right-aligned two-column table
    assert next(iter(summary.as_dict())) == "n_periods"


def test_summary_without_turnover_has_no_such_rows():
    text = str(performance_summary([0.01, 0.02]))
    assert "turnover" not in text and "cost" not in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"turnover": [1.0, 2.0]}, "turnover has 2 values but returns has 8"),
        ({"costs": [0.5]}, "costs has 1 values but returns has 8"),
        ({"turnover": [0.1] * 9}, "turnover has 9 values but returns has 8"),
        ({"turnover": [0.0, 0.2, -1.0] + [0.0] * 5}, r"turnover must be >= 0 .* -1.0 at period 2"),
    ],
)
def test_turnover_and_costs_must_cover_the_returns_periods(kwargs, message):
    returns = [0.01, -0.02, 0.03, -0.05, 0.0, 0.02, -0.01, 0.004]
    with pytest.raises(ValueError, match=message):
        performance_summary(returns, **kwargs)


def test_costs_may_be_negative_a_rebate():
    summary = performance_summary([0.01, 0.02], turnover=[0.5, 0.0], costs=[0.001, -0.0005])
    assert summary.total_cost == pytest.approx(0.0005) and summary.mean_turnover == 0.25


def test_pnl_summary():
    summary = pnl_summary([1.0, -2.0, 3.0], 12)
    assert summary.total_pnl == 2.0 and summary.max_drawdown == 2.0
    assert summary.sharpe_ratio == pytest.approx(
        np.mean([1, -2, 3]) / np.std([1, -2, 3], ddof=1) * np.sqrt(12)
    )
    assert "Total P&L" in str(summary)


def test_pnl_rounding_rule_uses_scale():
    increments = np.array([1e-9, 1e-9 + 1e-22])
    assert pnl_summary(increments, scale=1e9).pnl_volatility == 0.0


def test_performance_summary_passes_its_parameters_to_every_metric():
    returns = np.array([0.01, -0.02, 0.03, -0.005, 0.0, 0.02, -0.01, 0.004])
    summary = performance_summary(returns, 12, risk_free=0.03, level=0.8)
    assert summary.sharpe_ratio == pytest.approx(m.sharpe_ratio(returns, 12, 0.03))
    assert summary.sortino_ratio == pytest.approx(m.sortino_ratio(returns, 12, target=0.03 / 12))
    assert summary.calmar_ratio == pytest.approx(m.calmar_ratio(returns, 12))
    assert summary.annualized_return == pytest.approx(m.annualized_return(returns, 12))
    assert summary.annualized_volatility == pytest.approx(m.annualized_volatility(returns, 12))
    assert summary.value_at_risk == pytest.approx(m.value_at_risk(returns, 0.8))
    assert summary.conditional_value_at_risk == pytest.approx(
        m.conditional_value_at_risk(returns, 0.8)
    )
    # not the defaults
    assert summary.sharpe_ratio != pytest.approx(m.sharpe_ratio(returns, 12))
    assert summary.sortino_ratio != pytest.approx(m.sortino_ratio(returns, 12))
    assert summary.calmar_ratio != pytest.approx(m.calmar_ratio(returns))
    assert summary.value_at_risk != pytest.approx(m.value_at_risk(returns))
