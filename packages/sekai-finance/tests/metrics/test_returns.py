"""Return-series metrics."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance import metrics as m

R = np.array([0.01, -0.02, 0.03, 0.0, -0.01])


def test_equity_curve_and_inverse():
    curve = m.equity_curve(R, initial=2.0)
    assert curve[0] == 2.0 and curve[-1] == pytest.approx(2 * np.prod(1 + R))
    assert m.returns_from_equity(curve) == pytest.approx(R)


def test_wipe_out_gives_zero_equity_then_minus_one_and_zeros():
    curve = m.equity_curve([0.1, -1.5, 0.2])
    assert curve.tolist() == [1.0, 1.1, 0.0, 0.0]
    assert m.returns_from_equity(curve).tolist() == [pytest.approx(0.1), -1.0, 0.0]
    assert m.total_return([0.1, -1.5, 0.2]) == -1.0
    assert m.annualized_return([0.1, -1.5]) == -1.0
    assert m.max_drawdown([0.1, -1.5]) == 1.0


def test_returns_from_equity_validates():
    with pytest.raises(ValueError):
        m.returns_from_equity([0.0, 1.0])
    with pytest.raises(ValueError):
        m.returns_from_equity([1.0, 0.0, 1.0])


@pytest.mark.parametrize("bad", [[], [[0.1]], [0.1, np.nan], [np.inf]])
def test_invalid_series_are_refused(bad):
    with pytest.raises(ValueError):
        m.total_return(bad)


def test_annualized_return_and_volatility():
    assert m.annualized_return(R, 252) == pytest.approx(np.exp(np.log1p(R).sum() * 252 / 5) - 1)
    assert m.annualized_volatility(R, 12) == pytest.approx(np.std(R, ddof=1) * np.sqrt(12))
    assert m.annualized_volatility([0.01]) == 0.0
    assert m.annualized_volatility([0.1] * 10) == 0.0  # constant up to rounding
    assert m.annualized_return([1000.0] * 4) == float("inf")
    with pytest.raises(ValueError):
        m.annualized_return(R, 0)


def test_sharpe_and_sortino():
    e = R - 0.02 / 252
    assert m.sharpe_ratio(R, 252, 0.02) == pytest.approx(e.mean() / e.std(ddof=1) * np.sqrt(252))
    downside = np.sqrt(np.mean(np.minimum(R, 0) ** 2))
    assert m.sortino_ratio(R) == pytest.approx(R.mean() / downside * np.sqrt(252))
    assert m.sortino_ratio([0.01, 0.02]) == float("inf")
    assert m.sortino_ratio([0.0, 0.0]) == 0.0


def test_cash_at_the_risk_free_rate_has_zero_ratios():
    cash = np.full(20, 0.02 / 252)
    assert m.sharpe_ratio(cash, 252, 0.02) == 0.0
    assert m.sortino_ratio(cash, 252, target=0.02 / 252) == 0.0


def test_drawdowns_and_calmar():
    dd = m.drawdown_series([0.1, -0.5, 0.2])
    assert dd == pytest.approx([0.0, 0.0, 0.5, 0.4])
    assert m.calmar_ratio([0.01, 0.01]) == float("inf")
    assert m.calmar_ratio(R) == pytest.approx(m.annualized_return(R) / m.max_drawdown(R))


def test_var_cvar_and_hit_rate():
    assert m.value_at_risk(R, 0.8) == pytest.approx(-np.quantile(R, 0.2))
    assert m.conditional_value_at_risk(R, 0.8) == pytest.approx(0.02)
    assert m.conditional_value_at_risk(R, 0.8) >= m.value_at_risk(R, 0.8)
    assert m.hit_rate(R) == 0.5 and m.hit_rate([0.0]) == 0.0
    with pytest.raises(ValueError):
        m.value_at_risk(R, 1.0)
