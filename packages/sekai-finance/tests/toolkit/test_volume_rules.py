"""Missing and negative volumes (finance.md §5.1, §6 rule 2; issue 30).

A missing volume used to count as a zero volume: ``SquareRootImpact`` then charged the whole
traded value, and a NaN in a data panel could wipe an account in one step. Now a ``MarketData``
refuses a negative ``volume``, and ``SquareRootImpact`` treats a missing (NaN/inf) or negative
volume as it treats a missing volatility: the median of the row's valid volumes, else
``fallback_volume``, else a ``ValueError``. A finite zero volume is valid (no liquidity: the
trade costs its whole value, as documented).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.finance import MarketData, SquareRootImpact

NAN, INF = np.nan, np.inf
EQUITY, SIGMA, TRADE = 1e6, 0.02, 0.5


def rate(volume: float) -> float:
    """The impact rate ``0.5·σ·sqrt(q / V)`` of one asset trading ``TRADE`` into ``volume``."""
    return 0.5 * SIGMA * math.sqrt(TRADE * EQUITY / volume)


def impact(volume: list[float] | np.ndarray, trades: list[float] | None = None, **kw: float):
    volume = np.asarray(volume, dtype=np.float64)
    trades_a = np.full(volume.shape, TRADE) if trades is None else np.asarray(trades, np.float64)
    return SquareRootImpact(0.5, **kw)(
        trades_a,
        equity=np.full(trades_a.shape[:-1], EQUITY),
        volatility=np.full(trades_a.shape, SIGMA),
        volume=volume,
    )


@pytest.mark.parametrize("bad", [NAN, INF, -INF, -1e6])
def test_an_invalid_volume_takes_the_median_of_the_row_not_the_whole_trade(bad):
    # valid 1e7 and 4e7: the median 2.5e7 stands in; the old rule charged the whole 0.5
    cost = impact([1e7, bad, 4e7])
    assert cost == pytest.approx(TRADE * (rate(1e7) + rate(2.5e7) + rate(4e7)), rel=1e-12)
    assert cost < 0.01


def test_a_zero_volume_is_valid_and_costs_the_whole_trade():
    # valid 0 and 4e7: median 2e7 for the NaN; the zero itself still caps the impact at 1
    cost = impact([0.0, NAN, 4e7])
    assert cost == pytest.approx(TRADE * (1.0 + rate(2e7) + rate(4e7)), rel=1e-12)


def test_a_row_without_valid_volume_uses_fallback_volume():
    trades = np.full((2, 2), TRADE)
    volume = np.array([[NAN, -1.0], [1e7, NAN]])
    cost = impact(volume, trades=trades, fallback_volume=4e7)
    assert cost == pytest.approx([2 * TRADE * rate(4e7), 2 * TRADE * rate(1e7)], rel=1e-12)


def test_a_traded_row_without_valid_volume_and_no_fallback_is_refused():
    with pytest.raises(ValueError, match="fallback_volume") as excinfo:
        impact([NAN, NAN], trades=[TRADE, 0.0])
    assert "not a zero volume" in str(excinfo.value)
    assert impact([NAN, NAN], trades=[0.0, 0.0]) == 0.0  # nothing traded: nothing to price


def test_fallback_volume_is_checked_and_shown():
    model = SquareRootImpact(0.3, fallback_volume=5e6)
    assert repr(model) == "SquareRootImpact(0.3, fallback_volume=5000000.0)"
    assert model.fallbacks == frozenset({"volume"})
    both = SquareRootImpact(0.3, fallback_volatility=0.01, fallback_volume=5e6)
    assert both.fallbacks == frozenset({"volatility", "volume"})
    with pytest.raises(ValueError, match="fallback_volume"):
        SquareRootImpact(fallback_volume=-1.0)
    with pytest.raises(TypeError, match="fallback_volume"):
        SquareRootImpact(fallback_volume=[1e6])


def test_market_data_refuses_a_negative_volume_naming_where():
    prices = np.full((4, 2), 100.0)
    volume = np.full((4, 2), 1e4)
    volume[2, 1] = -5.0
    with pytest.raises(ValueError, match=r"volume.*-5\.0 at row 2, column 1"):
        MarketData(prices, fields={"volume": volume})
    with pytest.raises(ValueError, match="volume"):
        MarketData(prices).with_fields(volume=volume)
    volume[2, 1] = NAN  # missing is allowed
    assert np.isnan(MarketData(prices, fields={"volume": volume}).field("volume")[2, 1])


def test_portfolio_with_a_missing_volume_does_not_charge_the_whole_trade():
    """A NaN volume for one asset of three: the first rebalance used to cost that asset's whole
    target weight (a third of the account); now it costs the median-volume impact."""
    rows, n = 12, 3
    rng = np.random.default_rng(0)
    prices = 100 * np.exp(np.cumsum(rng.normal(0.0, 0.01, (rows, n)), axis=0))
    volume = np.full((rows, n), 1e6)
    volume[:, 1] = NAN
    data = MarketData(prices, fields={"volume": volume})
    env = PortfolioEnv(
        data=data, lookback=3, episode_length=5, transaction_cost=SquareRootImpact(0.5)
    )
    env.reset(seed=0)
    result = env.step(np.array([1.0, 1.0, 1.0, 0.0], dtype=np.float32))
    assert 0.0 < result.info["cost"] < 1e-3
