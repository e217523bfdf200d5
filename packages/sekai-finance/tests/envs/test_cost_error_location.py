"""A cost model that cannot price a trade mid-episode (finance.md §6 rule 2: no valid spread,
volume or volatility in a traded row, no fallback) says where: the decision's data row and
timestamp, and on a native vector env the sub-env. The error stays a ``ValueError`` with the
model's explanation."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import sekai
from sekai.finance import MarketData, SpreadCost, SquareRootImpact

DAYS = pd.bdate_range("2021-01-01", periods=120)  # row 41 is 2021-03-01
_rng = np.random.default_rng(2)
PRICES = 100 * np.exp(np.cumsum(_rng.normal(0, 0.01, (120, 3)), axis=0))
SPREAD = _rng.uniform(1e-4, 1e-3, (120, 3))
SPREAD[41] = np.nan  # one lost day
VOLUME = _rng.uniform(1e4, 1e5, (120, 3))
VOLUME[41] = np.nan
REASON = (
    r": no valid spread in a row with traded assets .* Pass fallback_spread= to set a fallback\."
)


def dated() -> MarketData:
    return MarketData(PRICES, timestamps=DAYS, fields={"spread": SPREAD})


def make_vec(mode: str | None) -> sekai.VecEnv:
    vec = sekai.make_vec(
        "Portfolio-v0",
        3,
        data=dated(),
        lookback=4,
        episode_length=8,
        transaction_cost=SpreadCost(),
        vectorization_mode=mode,
    )
    vec.reset(options=[{"start": 4}, {"start": 41}, {"start": 60}])
    return vec


def test_a_single_env_names_the_decision_row_and_its_date():
    env = sekai.make(
        "Portfolio-v0", data=dated(), lookback=4, episode_length=8, transaction_cost=SpreadCost()
    )
    env.reset(options={"start": 40})
    env.step(np.ones(4, np.float32))  # row 40 has quotes
    with pytest.raises(ValueError) as caught:
        env.step(np.array([1, 0, 0, 0], np.float32))
    message = str(caught.value)
    assert message.startswith(
        "SpreadCost(half_spread=from data) cannot price a trade at the decision of row 41 "
        "(timestamp 2021-03-01): no valid spread"
    )
    assert "fallback_spread=" in message
    copy = pickle.loads(pickle.dumps(caught.value))  # a worker process sends it back
    assert type(copy) is type(caught.value) and str(copy) == message


def test_a_native_env_names_the_sub_env_as_well():
    vec = make_vec(None)
    with pytest.raises(
        ValueError,
        match=r"^SpreadCost\(half_spread=from data\) cannot price a trade of sub-env 1 at the "
        rf"decision of row 41 \(timestamp 2021-03-01\){REASON}$",
    ):
        vec.step(np.ones((3, 4), np.float32))


def test_a_sync_env_raises_the_sub_env_error_naming_its_decision():
    vec = make_vec("sync")
    with pytest.raises(
        ValueError,
        match=rf"cannot price a trade at the decision of row 41 \(timestamp 2021-03-01\){REASON}",
    ):
        vec.step(np.ones((3, 4), np.float32))


@pytest.mark.parametrize("native", [False, True])
def test_undated_data_gives_the_row_and_its_timestamp(native):
    data = MarketData(PRICES[:, :1], fields={"volume": VOLUME[:, :1]})  # timestamps 0, 1, ...
    model = SquareRootImpact(fallback_volatility=0.01)
    if native:
        env = sekai.make_vec(
            "Trading-v0", 2, data=data, lookback=4, episode_length=8, transaction_cost=model
        )
        env.reset(options=[{"start": 30}, {"start": 41}])
        action: object = np.array([2, 2])
    else:
        env = sekai.make(
            "Trading-v0", data=data, lookback=4, episode_length=8, transaction_cost=model
        )
        env.reset(options={"start": 41})
        action = 2
    sub_env = "of sub-env 1 " if native else ""
    with pytest.raises(
        ValueError,
        match=rf"cannot price a trade {sub_env}at the decision of row 41 \(timestamp 41\): no "
        "valid volume in a row with traded assets .* Pass fallback_volume=",
    ):
        env.step(action)


def test_market_names_the_decision_row_and_its_date():
    env = sekai.make(
        "Market-v0", data=dated(), lookback=4, episode_length=8, transaction_cost=SpreadCost()
    )
    env.reset(options={"start": 41})
    with pytest.raises(ValueError, match=r"at the decision of row 41 \(timestamp 2021-03-01\)"):
        env.step(np.full(env.action_space.shape, 0.2, np.float32))


def test_a_bad_price_of_dated_data_is_located_by_its_date():
    prices = PRICES.copy()
    prices[41, 2] = -1.0
    with pytest.raises(
        ValueError, match=r"first at row 41 \(timestamp 2021-03-01\), asset 'asset_2'"
    ):
        MarketData(prices, timestamps=DAYS)
