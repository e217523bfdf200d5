"""Parameters that lose the account by construction (finance.md §6 rule 1, §12.1, §12.5; issue 30).

A proportional rate (``transaction_cost``, ``ProportionalCost.rate``, ``SpreadCost``'s
``half_spread``) of 1 or more charges at least the whole traded value: refused at construction.
Exposure of 10x equity or more (Trading-v0 ``positions``, Market-v0 ``max_leverage``) is legal
but one ordinary adverse move (10 % or less) wipes the account out: ``sekai.WipeOutWarning``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market import MarketEnv
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector import TradingVecEnv
from sekai.finance import ProportionalCost, SpreadCost

ENVS = [TradingEnv, PortfolioEnv, MarketEnv]


@pytest.mark.parametrize("rate", [1.0, 1, 1.5, np.float64(2.0)])
@pytest.mark.parametrize("env", ENVS, ids=lambda e: e.__name__)
def test_a_transaction_cost_of_one_or_more_is_refused(env, rate) -> None:
    with pytest.raises(ValueError, match=r"transaction_cost must be < 1 .*whole traded value"):
        env(transaction_cost=rate)


@pytest.mark.parametrize(
    "build",
    [
        lambda: ProportionalCost(1.0),
        lambda: ProportionalCost([0.001, 1.0]),
        lambda: SpreadCost(half_spread=1.0),
        lambda: SpreadCost(half_spread=[0.5, 3.0]),
    ],
    ids=["rate", "per-asset rate", "half_spread", "per-asset half_spread"],
)
def test_cost_rates_of_one_or_more_are_refused(build) -> None:
    with pytest.raises(ValueError, match="must be < 1"):
        build()


def test_rates_just_below_one_are_accepted() -> None:
    assert TradingEnv(transaction_cost=0.999).cost_model == ProportionalCost(0.999)
    assert repr(SpreadCost(half_spread=[0.5, 0.999])) == "SpreadCost(half_spread=[0.5, 0.999])"


@pytest.mark.parametrize("positions", [(-10.0, 0.0, 10.0), (0.0, 25.0), (-40.0, 1.0)])
def test_trading_positions_of_ten_times_equity_or_more_warn(positions) -> None:
    largest = max(abs(p) for p in positions)
    with pytest.warns(sekai.WipeOutWarning, match=rf"positions=.* up to {largest:g}x equity"):
        TradingEnv(positions=positions)
    with pytest.warns(sekai.WipeOutWarning):  # the native env's template too
        TradingVecEnv(2, positions=positions).close()
    with pytest.warns(sekai.WipeOutWarning):
        sekai.make("Trading-v0", positions=positions).close()


@pytest.mark.parametrize("positions", [(-1.0, 0.0, 1.0), (-3.0, 0.0, 3.0), (0.0, 9.99)])
def test_trading_positions_below_ten_times_equity_do_not_warn(positions) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TradingEnv(positions=positions)


def test_the_warned_position_is_wiped_out_by_the_move_it_names() -> None:
    """20x long: the message says a 5 % fall wipes the account out, and it does."""
    prices = np.array([100.0, 100.0, 95.0, 95.0])
    with pytest.warns(sekai.WipeOutWarning, match=r"adverse move of 0\.05 \(5 %\)"):
        env = TradingEnv(prices, lookback=1, episode_length=2, positions=(0.0, 20.0))
    env.reset(seed=0)
    result = env.step(1)
    assert result.terminated and result.info["equity"] == 0.0


def test_market_max_leverage_of_ten_or_more_warns() -> None:
    with pytest.warns(sekai.WipeOutWarning, match=r"Market-v0: max_leverage=10\.0 .* 10x"):
        MarketEnv(max_leverage=10.0, allow_short=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MarketEnv(max_leverage=2.0, allow_short=True)
