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


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([True, False, True], "not bools"),
        (["0.1", "0.2"], "got strings"),
        ([None, 0.1], "got None"),
    ],
)
def test_series_that_are_not_numbers_are_type_errors(bad, match):
    with pytest.raises(TypeError, match=f"returns must be real numbers.*{match}"):
        m.sharpe_ratio(bad)
    with pytest.raises(TypeError, match="equity must be real numbers"):
        m.returns_from_equity(bad)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: m.sharpe_ratio(R, risk_free=np.nan), ValueError, "risk_free must be a finite"),
        (lambda: m.sharpe_ratio(R, risk_free="0.01"), TypeError, "risk_free must be a finite"),
        (lambda: m.sortino_ratio(R, target="x"), TypeError, "target must be a finite number"),
        (lambda: m.equity_curve(R, initial=-1), ValueError, "initial must be a finite number > 0"),
        (lambda: m.equity_curve(R, initial=np.nan), ValueError, "initial must be a finite"),
        (lambda: m.equity_curve(R, initial="2"), TypeError, "initial must be a finite"),
        (lambda: m.pnl_summary(R, scale=np.nan), ValueError, "scale must be a finite number"),
        (lambda: m.value_at_risk(R, "0.9"), TypeError, r"level must be a number in \(0, 1\)"),
        (lambda: m.value_at_risk(R, 1.5), ValueError, r"level must be a number in \(0, 1\)"),
        (  # not its 401 digits
            lambda: m.value_at_risk(R, 10**400),
            ValueError,
            r"^level must be a number in \(0, 1\), got an int too large for a float64\.$",
        ),
        (lambda: m.sharpe_ratio(R, "252"), TypeError, "periods_per_year must be a finite"),
        (lambda: m.sharpe_ratio(R, np.inf), ValueError, "periods_per_year must be a finite"),
    ],
)
def test_parameters_beside_the_returns_are_checked(call, error, match):
    with pytest.raises(error, match=match):
        call()


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


def test_returns_from_equity_refuses_negative_equity():
    with pytest.raises(ValueError, match="equity must not be negative"):
        m.returns_from_equity([1.0, -0.5])
