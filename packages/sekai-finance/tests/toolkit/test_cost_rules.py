"""Cost model rules (finance.md §6): missing context entries and scalar-only parameters.

Rule 2: a missing (NaN/inf) or negative per-asset ``spread``/``volatility`` is replaced by the
median of the valid entries of its row (a finite zero is valid); a row with traded assets and no
valid entry uses the model's fallback, and without one raises a ``ValueError`` naming the fallback
keyword. ``equity`` has no fallback: a NaN or infinite one is refused, naming the model. Rule 1:
thresholds, coefficients and fallbacks must be scalars (``TypeError``).
"""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.costs import FixedCost, ProportionalCost, SpreadCost, SquareRootImpact

NAN, INF = np.nan, np.inf

# SquareRootImpact set-up where sqrt(q / V) is a round number: q = 0.5 * 1e6 = 5e5 and
# V = 5e7, so sqrt(q / V) = 0.1 and, with c = 0.5, each asset traded by 0.5 costs
# 0.5 * sigma * 0.1 * 0.5 = 0.025 * sigma.
EQUITY, VOLUME, TRADE, PER_SIGMA = 1e6, 5e7, 0.5, 0.025


def impact(model, volatility, trades=None):
    volatility = np.asarray(volatility, dtype=np.float64)
    if trades is None:
        trades = np.full(volatility.shape, TRADE)
    trades = np.asarray(trades, dtype=np.float64)
    equity = np.full(trades.shape[:-1], EQUITY)
    return model(trades, equity=equity, volatility=volatility, volume=np.full(trades.shape, VOLUME))


# -- SpreadCost: rule 2 -----------------------------------------------------------------------


def test_spread_cost_replaces_a_negative_spread_by_the_row_median():
    # valid entries 0.002 and 0.006: median 0.004 stands in for the negative quote
    cost = SpreadCost()([1.0, 1.0, 1.0], spread=[0.002, -0.001, 0.006])
    assert cost == pytest.approx(0.5 * (0.002 + 0.004 + 0.006))


@pytest.mark.parametrize("bad", [INF, -INF])
def test_spread_cost_replaces_an_infinite_spread_by_the_row_median(bad):
    # valid entries 0.002, 0.004, 0.010: median 0.004
    cost = SpreadCost()([1.0, 1.0, 1.0, 1.0], spread=[bad, 0.002, 0.004, 0.010])
    assert cost == pytest.approx(0.5 * (0.004 + 0.002 + 0.004 + 0.010))


def test_spread_cost_uses_the_median_not_the_mean_of_the_valid_entries():
    # valid 0.001, 0.002, 0.009: median 0.002 (the mean would be 0.004)
    cost = SpreadCost()([0.0, 0.0, 0.0, 1.0], spread=[0.001, 0.002, 0.009, NAN])
    assert cost == pytest.approx(0.5 * 0.002)


def test_spread_cost_counts_a_finite_zero_spread_as_valid():
    # valid 0.0 and 0.004: median 0.002 (were the zero dropped, the median would be 0.004)
    cost = SpreadCost()([1.0, 1.0, 1.0], spread=[0.0, 0.004, NAN])
    assert cost == pytest.approx(0.5 * (0.0 + 0.004 + 0.002))


def test_spread_cost_of_a_locked_market_is_zero_without_a_fallback():
    # every quote is a finite zero: valid, so no fallback is needed and no error is raised
    assert SpreadCost()([1.0, -0.5], spread=[0.0, 0.0]) == 0.0
    assert SpreadCost()([1.0, -0.5, 0.25], spread=[0.0, 0.0, NAN]) == 0.0


def test_spread_cost_takes_the_median_row_by_row():
    trades = np.ones((2, 3))
    spread = np.array([[0.002, NAN, 0.004], [0.010, 0.020, -1.0]])
    cost = SpreadCost()(trades, spread=spread)
    # row 0: median 0.003; row 1: median 0.015
    assert cost.shape == (2,)
    assert cost == pytest.approx([0.5 * (0.002 + 0.003 + 0.004), 0.5 * (0.010 + 0.020 + 0.015)])


def test_spread_cost_prefers_the_row_median_to_the_fallback():
    cost = SpreadCost(fallback_spread=1.0)([1.0, 1.0], spread=[0.002, NAN])
    assert cost == pytest.approx(0.5 * (0.002 + 0.002))


@pytest.mark.parametrize("quotes", [[NAN, NAN], [-0.1, NAN], [INF, -INF], [-1.0, -2.0]])
def test_spread_cost_uses_the_fallback_for_a_traded_row_without_valid_quotes(quotes):
    cost = SpreadCost(fallback_spread=0.01)([0.5, -0.5], spread=quotes)
    assert cost == pytest.approx(0.5 * 0.01 * (0.5 + 0.5))


def test_spread_cost_fallback_applies_only_to_the_rows_without_valid_quotes():
    trades = np.ones((2, 2))
    spread = np.array([[NAN, NAN], [0.002, NAN]])
    cost = SpreadCost(fallback_spread=0.01)(trades, spread=spread)
    assert cost == pytest.approx([0.5 * (0.01 + 0.01), 0.5 * (0.002 + 0.002)])


@pytest.mark.parametrize("trades", [[1.0, 0.0], [0.0, -0.5]])
def test_spread_cost_without_fallback_refuses_a_traded_row_without_valid_quotes(trades):
    with pytest.raises(ValueError, match="fallback_spread") as excinfo:
        SpreadCost()(trades, spread=[NAN, -0.1])
    assert "free" in str(excinfo.value)  # explains that the trade would otherwise be free


def test_spread_cost_refuses_when_any_traded_row_lacks_valid_quotes():
    trades = np.ones((2, 2))
    spread = np.array([[0.002, 0.004], [INF, NAN]])
    with pytest.raises(ValueError, match="fallback_spread"):
        SpreadCost()(trades, spread=spread)


def test_spread_cost_prices_an_untraded_row_without_quotes_at_zero():
    trades = np.array([[0.0, 0.0], [1.0, 1.0]])
    spread = np.array([[NAN, -1.0], [0.002, 0.004]])
    cost = SpreadCost()(trades, spread=spread)
    assert cost == pytest.approx([0.0, 0.5 * (0.002 + 0.004)])


def test_spread_cost_without_the_spread_input_names_it():
    with pytest.raises(ValueError, match="spread"):
        SpreadCost()([1.0])


# -- SquareRootImpact: rule 2 on volatility -----------------------------------------------------


def test_set_up_of_the_impact_tests_gives_round_numbers():
    assert impact(SquareRootImpact(0.5), [0.02]) == pytest.approx(PER_SIGMA * 0.02)


@pytest.mark.parametrize("bad", [NAN, -0.01, INF, -INF])
def test_square_root_impact_replaces_an_invalid_volatility_by_the_row_median(bad):
    # valid 0.02 and 0.04: median 0.03
    cost = impact(SquareRootImpact(0.5), [0.02, bad, 0.04])
    assert cost == pytest.approx(PER_SIGMA * (0.02 + 0.03 + 0.04))


def test_square_root_impact_uses_the_median_not_the_mean():
    # valid 0.01, 0.02, 0.09: median 0.02 (the mean would be 0.04); only the last asset trades
    cost = impact(SquareRootImpact(0.5), [0.01, 0.02, 0.09, NAN], trades=[0.0, 0.0, 0.0, TRADE])
    assert cost == pytest.approx(PER_SIGMA * 0.02)


def test_square_root_impact_counts_a_finite_zero_volatility_as_valid():
    # valid 0.0 and 0.04: median 0.02 (were the zero dropped, the median would be 0.04)
    cost = impact(SquareRootImpact(0.5), [0.0, NAN, 0.04])
    assert cost == pytest.approx(PER_SIGMA * (0.0 + 0.02 + 0.04))


def test_square_root_impact_of_a_flat_window_is_zero_without_a_fallback():
    assert impact(SquareRootImpact(0.5), [0.0, 0.0, NAN]) == 0.0


def test_square_root_impact_takes_the_median_row_by_row():
    volatility = np.array([[0.02, NAN, 0.04], [0.10, -1.0, 0.20]])
    cost = impact(SquareRootImpact(0.5), volatility)
    assert cost.shape == (2,)
    assert cost == pytest.approx(
        [PER_SIGMA * (0.02 + 0.03 + 0.04), PER_SIGMA * (0.10 + 0.15 + 0.20)]
    )


def test_square_root_impact_prefers_the_row_median_to_the_fallback():
    cost = impact(SquareRootImpact(0.5, fallback_volatility=1.0), [0.02, NAN])
    assert cost == pytest.approx(PER_SIGMA * (0.02 + 0.02))


@pytest.mark.parametrize("sigmas", [[NAN, NAN], [-0.1, NAN], [INF, -INF]])
def test_square_root_impact_uses_the_fallback_for_a_row_without_valid_volatility(sigmas):
    cost = impact(SquareRootImpact(0.5, fallback_volatility=0.04), sigmas)
    assert cost == pytest.approx(PER_SIGMA * (0.04 + 0.04))


def test_square_root_impact_fallback_applies_only_to_rows_without_valid_volatility():
    volatility = np.array([[0.02, NAN], [NAN, -1.0]])
    cost = impact(SquareRootImpact(0.5, fallback_volatility=0.04), volatility)
    assert cost == pytest.approx([PER_SIGMA * (0.02 + 0.02), PER_SIGMA * (0.04 + 0.04)])


def test_square_root_impact_without_fallback_refuses_a_traded_row_without_volatility():
    with pytest.raises(ValueError, match="fallback_volatility") as excinfo:
        impact(SquareRootImpact(0.5), [NAN, -0.2], trades=[0.0, TRADE])
    assert "free" in str(excinfo.value)


def test_square_root_impact_prices_an_untraded_row_without_volatility_at_zero():
    trades = np.array([[0.0, 0.0], [TRADE, TRADE]])
    volatility = np.array([[NAN, NAN], [0.02, 0.04]])
    cost = impact(SquareRootImpact(0.5), volatility, trades=trades)
    assert cost == pytest.approx([0.0, PER_SIGMA * (0.02 + 0.04)])


def test_square_root_impact_without_the_volatility_input_names_it():
    with pytest.raises(ValueError, match="volatility"):
        SquareRootImpact(0.5)([TRADE], equity=EQUITY, volume=[VOLUME])


# -- equity: no fallback, so a missing one is refused -----------------------------------------

EQUITY_MODELS = [
    pytest.param(FixedCost(5.0), id="FixedCost"),
    pytest.param(SquareRootImpact(0.5), id="SquareRootImpact"),
    pytest.param(SpreadCost(half_spread=0.001) + FixedCost(5.0), id="composite"),
]


@pytest.mark.parametrize("equity", [NAN, INF, -INF])
@pytest.mark.parametrize("model", EQUITY_MODELS)
def test_a_missing_equity_is_refused_naming_the_model_and_the_input(model, equity):
    with pytest.raises(ValueError, match=r"^FixedCost\(5\.0\)|^SquareRootImpact\(0\.5\)") as info:
        model([TRADE], equity=equity, volatility=[0.02], volume=[VOLUME])
    assert "equity must be finite" in str(info.value)


@pytest.mark.parametrize("model", EQUITY_MODELS)
def test_a_missing_equity_in_one_row_of_a_batch_is_refused(model):
    trades = np.full((2, 1), TRADE)
    with pytest.raises(ValueError, match="equity must be finite"):
        model(trades, equity=[EQUITY, NAN], volatility=[[0.02]] * 2, volume=[[VOLUME]] * 2)


def test_fixed_cost_of_a_wiped_out_account_stays_zero():
    assert FixedCost(5.0)([[TRADE], [TRADE]], equity=[0.0, EQUITY]).tolist() == [0.0, 5e-6]


# -- Rule 1: scalar-only parameters -------------------------------------------------------------

NON_SCALARS = [
    pytest.param([0.01], id="list"),
    pytest.param((0.01,), id="tuple"),
    pytest.param(np.array([0.01, 0.02]), id="array"),
    pytest.param("0.01", id="str"),
]

SCALAR_ONLY = [
    pytest.param(lambda v: FixedCost(1.0, threshold=v), id="FixedCost.threshold"),
    pytest.param(lambda v: SquareRootImpact(v), id="SquareRootImpact.coefficient"),
    pytest.param(
        lambda v: SquareRootImpact(0.5, fallback_volatility=v),
        id="SquareRootImpact.fallback_volatility",
    ),
    pytest.param(
        lambda v: SquareRootImpact(0.5, fallback_volume=v),
        id="SquareRootImpact.fallback_volume",
    ),
    pytest.param(lambda v: SpreadCost(fallback_spread=v), id="SpreadCost.fallback_spread"),
]


@pytest.mark.parametrize("value", NON_SCALARS)
@pytest.mark.parametrize("build", SCALAR_ONLY)
def test_scalar_only_parameters_refuse_non_scalars_with_type_error(build, value):
    with pytest.raises(TypeError):
        build(value)


@pytest.mark.parametrize("build", SCALAR_ONLY)
def test_scalar_only_parameters_refuse_bools(build):
    # §3.5: a bool is not accepted where a number is expected
    with pytest.raises((TypeError, ValueError)):
        build(True)


@pytest.mark.parametrize("value", [-0.01, NAN, INF])
@pytest.mark.parametrize("build", SCALAR_ONLY)
def test_scalar_only_parameters_refuse_negative_or_non_finite_values(build, value):
    with pytest.raises(ValueError):
        build(value)


@pytest.mark.parametrize("value", [0, 0.01, np.float64(0.01), np.int64(1)])
@pytest.mark.parametrize("build", SCALAR_ONLY)
def test_scalar_only_parameters_accept_real_scalars(build, value):
    build(value)


def test_scalar_fallbacks_and_coefficient_take_effect():
    assert SpreadCost(fallback_spread=np.float64(0.01))([1.0], spread=[NAN]) == pytest.approx(0.005)
    assert impact(SquareRootImpact(np.float64(0.5)), [0.02]) == pytest.approx(PER_SIGMA * 0.02)
    # threshold 0.1: only the change of 0.2 counts as a trade -> one fee of 5 over 1e6
    assert FixedCost(5.0, threshold=0.1)([0.2, 0.1, 0.05], equity=1e6) == pytest.approx(5e-6)


def test_per_asset_rates_and_half_spreads_remain_allowed():
    # rule 1 restricts amount/threshold/coefficient/fallbacks; rates and spreads may be per asset
    assert ProportionalCost([0.001, 0.002])([1.0, 1.0]) == pytest.approx(0.003)
    assert SpreadCost(half_spread=[0.001, 0.002])([1.0, -1.0]) == pytest.approx(0.003)
