"""Toolkit rules found in review: Time and MarketData survive pickling, 1-D cross-sections,
asof_join lags, pandas indexes as timestamps, unique selections, numbers that are numbers,
Sortino over the risk-free rate, the CVaR tail, evaluate of a random policy."""

from __future__ import annotations

import copy
import datetime
import pickle

import numpy as np
import pytest

import sekai
import sekai.finance.features as F
from sekai.finance import GBM, MarketData, SequentialStart, Time
from sekai.finance._values import check_number
from sekai.finance.baselines import RandomPolicy, evaluate
from sekai.finance.metrics import (
    conditional_value_at_risk,
    performance_summary,
    sortino_ratio,
    value_at_risk,
)
from sekai.finance.simulators import GARCH, BlockBootstrap, ListingProcess, RegimeSwitching

WALK = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 80)))


# -- Time -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [5, 2.5, "2020-01-03", np.datetime64("2020-01-03")])
def test_time_pickles_and_deep_copies_to_an_equal_time(value):
    time = Time(value)
    assert pickle.loads(pickle.dumps(time)) == time == copy.deepcopy(time)


def test_a_time_start_reaches_proc_workers():
    trading = {"prices": WALK, "episode_length": 20, "lookback": 5}
    vec = sekai.make_vec("Trading-v0", 2, vectorization_mode="proc", **trading)
    try:
        assert [i["timestamp"] for i in vec.reset(options={"start": Time(30)}).infos] == [30, 30]
    finally:
        vec.close()


def test_time_equality_and_hash_agree_across_spellings():
    assert Time(1) == Time(1.0) and len({Time(1), Time(1.0)}) == 1
    day = Time("2020-01-03")
    assert day == Time(datetime.date(2020, 1, 3)) == Time(np.datetime64("2020-01-03T00:00"))
    assert len({day, Time(datetime.datetime(2020, 1, 3))}) == 1
    assert Time(1) != Time(2)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -np.inf])
def test_time_refuses_non_finite_numbers(value):
    with pytest.raises(ValueError, match="finite number"):
        Time(value)


# -- features -------------------------------------------------------------------------------------


def test_cross_sections_of_a_single_series_have_one_asset_per_row():
    x = np.array([1.0, 2.0, np.nan, 3.0])
    assert np.array_equal(F.cross_sectional_rank(x), [0.5, 0.5, np.nan, 0.5], equal_nan=True)
    assert np.array_equal(F.cross_sectional_zscore(x), [0.0, 0.0, np.nan, 0.0], equal_nan=True)
    for transform in (F.cross_sectional_rank, F.cross_sectional_zscore):
        F.check_causal(transform, np.arange(1.0, 11.0))  # raises LookAheadError if not


def test_asof_join_takes_a_lag_of_the_axis_kind_only():
    days = np.arange("2020-01-01", "2020-01-11", dtype="datetime64[D]").astype("datetime64[ns]")
    events, values = days[[2, 5]] + np.timedelta64(12, "h"), [20.0, 50.0]
    one_day = F.asof_join(days, events, values, lag=np.timedelta64(1, "D"))
    assert np.array_equal(one_day, [np.nan] * 4 + [20.0] * 3 + [50.0] * 3, equal_nan=True)
    assert np.array_equal(
        F.asof_join(days, events, values, lag=datetime.timedelta(days=1)), one_day, equal_nan=True
    )
    for lag in (1, True, 1.5):
        with pytest.raises(TypeError, match="lag must be a timedelta"):
            F.asof_join(days, events, values, lag=lag)
    numbers = np.arange(10.0)
    lagged = F.asof_join(numbers, [2.0], [7.0], lag=1.5)  # the event counts from t = 3.5
    assert np.isnan(lagged[3]) and lagged[4] == 7.0
    for lag in (True, np.timedelta64(1, "D"), -1.0, np.inf):
        with pytest.raises(ValueError, match="lag must be a finite non-negative number"):
            F.asof_join(numbers, [2.0], [7.0], lag=lag)


def test_realized_volatility_needs_a_finite_positive_periods_per_year():
    for bad in (np.inf, 0, -1.0):
        with pytest.raises(ValueError, match="periods_per_year must be a finite number > 0"):
            F.realized_volatility(np.ones(10), 5, periods_per_year=bad)
    with pytest.raises(TypeError, match="periods_per_year must be a finite number > 0, got bool"):
        F.realized_volatility(np.ones(10), 5, periods_per_year=True)


def test_feature_arguments_are_checked():
    x = np.arange(10.0)
    for bad in (None, "a", np.True_):
        with pytest.raises(TypeError, match="halflife must be a finite number > 0"):
            F.ewm_mean(x, bad)
    with pytest.raises(TypeError, match="x must be real numbers, not bools"):
        F.rolling_mean([True, False], 2)
    with pytest.raises(TypeError, match="x must be real numbers, got strings"):
        F.rolling_mean(["1", "2"], 2)
    with pytest.raises(ValueError, match=r"min_periods must be <= window \(3\)"):
        F.rolling_mean(x, 3, min_periods=4)
    times = np.array(["2020-01-01", "NaT"], dtype="datetime64[D]")
    with pytest.raises(ValueError, match="target_times must not hold missing times"):
        F.asof_join(times, times[:1], [1.0])
    with pytest.raises(TypeError, match="n_checks must be an int >= 1, got bool"):
        F.check_causal(lambda a: a, x, n_checks=True)
    with pytest.raises(ValueError, match="n_checks must be an int >= 1, got -3"):
        F.check_causal(lambda a: a, x, n_checks=-3)


# -- MarketData -----------------------------------------------------------------------------------


def test_from_pandas_reads_a_numeric_or_date_string_index_as_timestamps():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(np.full((4, 2), 100.0), columns=["a", "b"])
    assert MarketData.from_pandas(frame).timestamps.tolist() == [0, 1, 2, 3]
    seconds = MarketData.from_pandas(frame.set_axis(1_700_000_000 + 60 * np.arange(4)))
    assert seconds.timestamps.tolist() == [1_700_000_000 + 60 * i for i in range(4)]
    halves = MarketData.from_pandas(frame.set_axis(np.arange(4) * 0.5))
    assert halves.timestamps.tolist() == [0.0, 0.5, 1.0, 1.5]
    dated = MarketData.from_pandas(frame.set_axis([f"2020-01-0{d}" for d in range(1, 5)]))
    assert dated.is_datetime and dated.timestamps[0] == np.datetime64("2020-01-01")
    with pytest.raises(ValueError, match="increasing"):
        MarketData.from_pandas(frame.set_axis([3, 2, 1, 0]))


def test_select_takes_each_asset_once():
    data = MarketData(np.ones((10, 3)), assets=["a", "b", "c"])
    assert data.select(["c", "a"]).assets == ("c", "a")
    with pytest.raises(ValueError, match=r"each asset once; repeated: \['a'\]"):
        data.select(["a", "b", "a"])


def test_market_data_stays_immutable_through_pickling_and_copies():
    data = MarketData(
        np.ones((10, 2)), fields={"volume": np.ones((10, 2))}, exogenous={"r": np.zeros(10)}
    )
    for other in (pickle.loads(pickle.dumps(data)), copy.deepcopy(data)):
        for array in (
            other.prices,
            other.field("volume"),
            other.timestamps,
            other.exogenous_series("r"),
        ):
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 5


# -- numbers that are not numbers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: GBM(corr=np.eye(2, dtype=bool)), ValueError),
        (lambda: GBM(mu="0.1"), ValueError),
        (lambda: BlockBootstrap([True, False], block_size=1), ValueError),
        (
            lambda: RegimeSwitching([GBM(), GBM()], np.full((2, 2), 0.5), initial=[True, False]),
            ValueError,
        ),
        (lambda: MarketData(np.ones(10), exogenous={"r": [True] * 10}), TypeError),
        (lambda: MarketData(np.ones(10), exogenous={"r": ["a"] * 10}), TypeError),
    ],
)
def test_bools_and_strings_are_not_accepted_as_numbers(make, error):
    with pytest.raises(error):
        make()


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: BlockBootstrap(np.zeros((30, 1)), block_size=True), "block_size"),
        (lambda: BlockBootstrap(np.zeros((30, 1)), block_size=2.0), "block_size"),
        (lambda: ListingProcess(GBM(n_assets=3), min_listed=True), "min_listed"),
        (lambda: ListingProcess(GBM(n_assets=3), min_listed=1.0), "min_listed"),
        (lambda: GBM(n_assets=2.0), "n_assets"),
    ],
)
def test_integer_model_parameters_of_another_type_raise_value_error(make, name):
    with pytest.raises(ValueError, match=rf"{name} must be an int"):
        make()


def test_garch_names_disagreeing_asset_counts_before_stationarity():
    with pytest.raises(
        ValueError, match="disagree on the number of assets: alpha has 2, beta has 3"
    ):
        GARCH(alpha=[0.1, 0.1], beta=[0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match=r"alpha \+ beta must be < 1 .*got 1\.1"):
        GARCH(alpha=0.5, beta=0.6)


# -- samplers -------------------------------------------------------------------------------------


def test_a_sequential_subclass_spawns_its_own_class_afresh():
    class Tagged(SequentialStart):
        tag = "mine"

    sampler = Tagged(2, stride=5)
    sampler.sample(np.random.default_rng(0), 100, 10)
    fresh = sampler.spawn()
    assert type(fresh) is Tagged and fresh is not sampler
    assert fresh.sample(np.random.default_rng(0), 100, 10) == 2  # back at start
    assert sampler.sample(np.random.default_rng(0), 100, 10) == 7  # the original carries on


# -- metrics and evaluate -------------------------------------------------------------------------


def test_sortino_of_a_summary_measures_excess_over_the_risk_free_rate():
    cash = [0.02 / 252] * 10  # earns exactly the risk-free rate
    summary = performance_summary(cash, risk_free=0.02)
    assert summary.sortino_ratio == 0.0 and summary.sharpe_ratio == 0.0
    r = [0.01, -0.02, 0.03, 0.0, -0.01]
    assert performance_summary(r, risk_free=0.0504).sortino_ratio == pytest.approx(
        sortino_ratio(r, 252, target=0.0504 / 252)
    )


def test_cvar_keeps_a_return_that_equals_the_quantile():
    r = [-0.02, -0.01, 0.0, 0.01, 0.02, 0.03]  # the 20 % quantile is exactly -0.01
    assert value_at_risk(r, 0.8) == 0.01
    assert conditional_value_at_risk(r, 0.8) == pytest.approx(0.015)  # mean of -0.02, -0.01


def test_evaluate_gives_the_same_numbers_for_the_same_random_policy():
    policy = RandomPolicy(0)
    first = evaluate(policy, "Trading-v0", 40, seed=3, episode_length=10)
    assert evaluate(policy, "Trading-v0", 40, seed=3, episode_length=10) == first
    assert evaluate(RandomPolicy(0), "Trading-v0", 40, seed=3, episode_length=10) == first
    assert evaluate(RandomPolicy(1), "Trading-v0", 40, seed=3, episode_length=10) != first


def test_with_fields_can_replace_the_prices_and_checks_them_as_prices():
    data = MarketData(np.ones((5, 2)), fields={"volume": np.ones((5, 2))})
    more = data.with_fields(close=np.full((5, 2), 2.0), spread=np.zeros((5, 2)))
    assert more.prices.tolist() == [[2.0, 2.0]] * 5 and data.prices.tolist() == [[1.0, 1.0]] * 5
    assert sorted(more.fields) == ["close", "spread", "volume"]
    with pytest.raises(ValueError, match="prices must be > 0"):
        data.with_fields(close=np.full((5, 2), -1.0))


def test_a_checked_number_of_minus_zero_is_plus_zero():
    assert np.signbit(check_number("risk_free", -0.0)) == np.False_
