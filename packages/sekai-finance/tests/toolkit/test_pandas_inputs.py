"""pandas inputs of the finance envs (finance.md §3.1, §4.3, §5.1); the finance session
installs the ``pandas`` extra, so these run in every CI run."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pytest

import sekai
from sekai.finance import MarketData
from sekai.finance.timestamps import TZ_HINT

pd = pytest.importorskip("pandas")

DAYS = pd.bdate_range("2021-01-04", periods=120)
WALK = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, (120, 3)), axis=0))
SHORT = {"lookback": 5, "episode_length": 20}


def test_a_dated_series_gives_datetime_timestamps_and_date_starts():
    series = pd.Series(WALK[:, 0], index=DAYS)
    env = sekai.make("Trading-v0", prices=series, episode_length=20, lookback=10)
    info = env.reset(options={"start": pd.Timestamp("2021-02-01")}).info
    assert info["timestamp"] == np.datetime64("2021-02-01")
    assert env.unwrapped.prices.tolist() == WALK[:, 0].tolist()
    for start in (datetime.date(2021, 2, 3), datetime.datetime(2021, 2, 3), "2021-02-03"):
        assert env.reset(options={"start": start}).info["timestamp"] == np.datetime64("2021-02-03")
    # a step's timestamp is the next row's date
    assert env.step(2).info["timestamp"] == np.datetime64("2021-02-04")


def test_an_undated_series_is_numbered_from_zero():
    env = sekai.make("Trading-v0", prices=pd.Series(WALK[:, 0]), episode_length=20, lookback=10)
    assert env.reset(options={"start": 30}).info["timestamp"] == 30


def test_a_dataframe_gives_one_asset_per_column():
    frame = pd.DataFrame(WALK, index=DAYS, columns=["a", "b", "c"])
    env = sekai.make("Portfolio-v0", prices=frame, episode_length=20, lookback=10)
    first = env.reset(options={"start": 10})
    assert env.unwrapped.n_assets == 3 and first.observation["returns"].shape == (10, 3)
    assert np.allclose(first.observation["returns"], np.diff(np.log(WALK[:11]), axis=0))
    assert first.info["timestamp"] == np.datetime64(DAYS[10])


def test_from_pandas_keeps_the_column_labels_as_asset_ids():
    frame = pd.DataFrame(100.0 + np.arange(8.0).reshape(4, 2), index=DAYS[:4])
    data = MarketData.from_pandas(frame)
    assert data.assets == (0, 1) and all(type(a) is int for a in data.assets)
    assert data.select([1]).prices.tolist() == [[101.0], [103.0], [105.0], [107.0]]
    named = MarketData.from_pandas(frame.rename(columns={0: "x", 1: "y"}))
    assert named.assets == ("x", "y")


@pytest.mark.parametrize("dated", [True, False], ids=["dated", "undated"])
def test_prices_keep_the_column_labels_as_asset_ids_whatever_the_index(dated):
    # One rule for both (finance.md §3.1): the labels as given, as MarketData.from_pandas
    # keeps them; only the timestamps depend on the index.
    index = DAYS if dated else None
    frame = pd.DataFrame(WALK[:, :2], columns=[10, 20], index=index)
    data = sekai.make("Portfolio-v0", prices=frame, **SHORT).unwrapped.data
    assert data.assets == (10, 20) and all(type(a) is int for a in data.assets)
    assert data.select([10]).prices.tolist() == [[x] for x in WALK[:, 0].tolist()]
    named = pd.Series(WALK[:, 0], name="spy", index=index)
    assert sekai.make("Trading-v0", prices=named, **SHORT).unwrapped.data.assets == ("spy",)
    unnamed = pd.Series(WALK[:, 0], index=index)  # its one column is labelled 0
    assert sekai.make("Trading-v0", prices=unnamed, **SHORT).unwrapped.data.assets == (0,)


def test_an_undated_frame_refuses_a_missing_column_label_as_from_pandas_does():
    frame = pd.DataFrame(WALK[:, :2], columns=["a", None])
    with pytest.raises(ValueError, match=r"missing id .* position\(s\) \[1\]"):
        sekai.make("Portfolio-v0", prices=frame, **SHORT)


def test_from_long_pivots_prices_and_fields():
    long = pd.DataFrame(
        {
            "date": np.repeat(DAYS[:4], 2),
            "symbol": ["x", "y"] * 4,
            "close": np.arange(1.0, 9.0),
            "volume": np.arange(10.0, 18.0),
        }
    )
    data = MarketData.from_long(long, fields=["volume"])
    assert list(data.assets) == ["x", "y"]
    assert data.prices.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    assert data.fields["volume"][:, 1].tolist() == [11.0, 13.0, 15.0, 17.0]
    assert data.is_datetime


def test_a_bool_column_is_refused():
    frame = pd.DataFrame({"a": WALK[:, 0], "b": WALK[:, 1] > 100})
    with pytest.raises(TypeError, match="not bools"):
        sekai.make("Portfolio-v0", prices=frame, episode_length=20, lookback=10)
    with pytest.raises(TypeError, match="not bools"):
        MarketData.from_pandas(frame.set_index(DAYS))


def test_a_timezone_aware_index_of_the_prices_is_refused():
    frame = pd.DataFrame(WALK, index=DAYS.tz_localize("UTC"), columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=f"^{re.escape(TZ_HINT)}$"):
        MarketData.from_pandas(frame)


def test_numpy_scalar_column_labels_become_python_asset_ids():
    columns = pd.Index([np.int64(7), np.str_("b"), np.float64(2.5)], dtype=object)
    data = MarketData.from_pandas(pd.DataFrame(WALK, index=DAYS, columns=columns))
    assert data.assets == (7, "b", 2.5)
    assert [type(a) for a in data.assets] == [int, str, float]
