"""Parameters that must be refused where they are given: models, bools, prices, cost rates."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import sekai
from sekai.envs.finance import LimitOrderBookEnv, PortfolioEnv, TradingEnv
from sekai.finance import GBM, MarketData, ProportionalCost, SpreadCost
from sekai.finance.simulators._checks import as_float

HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 300)))


# -- a model of another number of assets, set after construction ------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: PortfolioEnv(n_assets=3),
            "PortfolioEnv trades 3 assets but the model simulates 2",
        ),
        (lambda: TradingEnv(), "TradingEnv trades one asset but the model simulates 2"),
    ],
)
def test_setting_a_model_of_another_asset_count_is_refused(make, message):
    env = make()
    with pytest.raises(ValueError, match=message):
        env.model = GBM(n_assets=2)
    assert env.model is None
    env.reset(seed=0)
    assert env.observation_space.contains(env.reset(seed=0).observation)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_set_attr_of_a_model_of_another_asset_count_is_refused_on_every_backend(env_id):
    for mode in (None, "sync"):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode)
        with pytest.raises(ValueError, match="but the model simulates 7"):
            vec.set_attr("model", GBM(n_assets=7))
        vec.reset(seed=0)


def test_a_model_of_the_same_asset_count_is_taken():
    env = PortfolioEnv(n_assets=3)
    env.model = GBM(n_assets=3)
    assert env.reset(seed=0).observation["returns"].shape == (30, 3)


# -- bools are not numbers, not even inside lists ------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: PortfolioEnv(sigma=[True] * 5),
        lambda: PortfolioEnv(mu=[0.1, 0.1, 0.1, 0.1, True]),
        lambda: PortfolioEnv(sigma=np.ones(5, bool)),
        lambda: GBM(mu=[True, False]),
    ],
)
def test_bools_in_per_asset_parameters_are_refused(make):
    with pytest.raises(ValueError, match="not bools"):
        make()


def test_bools_in_cost_rates_are_refused():
    with pytest.raises(TypeError, match=r"not bools"):
        ProportionalCost([True, False])


# -- prices must be real numbers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prices", "what"),
    [
        (np.ones(300, bool), "not bools"),
        ([100.0] * 299 + [True], "not bools"),
        (np.full(300, 100 + 5j), "got complex numbers"),
        (["100"] * 300, "got strings"),
    ],
)
def test_prices_that_are_not_real_numbers_are_refused(prices, what):
    with pytest.raises(TypeError, match=rf"prices must be real numbers.*{what}|{what}"):
        sekai.make("Trading-v0", prices=prices)


def test_market_data_refuses_complex_prices_and_takes_exact_number_objects():
    with pytest.raises(TypeError, match="complex numbers"):
        MarketData(np.full((300, 2), 1 + 1j))
    env = sekai.make("Trading-v0", prices=np.array([Fraction(100)] * 300, dtype=object))
    assert env.unwrapped.prices[:2].tolist() == [100.0, 100.0]


# -- per-asset cost rates: one per asset, checked when given ------------------------------------


@pytest.mark.parametrize(
    ("cost", "name", "count"),
    [
        (ProportionalCost([0.001, 0.002]), "rate", 2),
        (ProportionalCost(0.001) + SpreadCost(half_spread=[0.1, 0.2, 0.3]), "half_spread", 3),
    ],
)
def test_per_asset_cost_parameters_must_have_one_value_per_asset(cost, name, count):
    message = rf"{name} has {count} per-asset values but Portfolio-v0 trades 5 assets"
    with pytest.raises(ValueError, match=message):
        PortfolioEnv(transaction_cost=cost)
    env = PortfolioEnv()
    with pytest.raises(ValueError, match=message):
        env.cost_model = cost
    with pytest.raises(ValueError, match=message):
        sekai.make_vec("Portfolio-v0", 2).set_attr("cost_model", cost)


def test_per_asset_cost_rates_of_the_right_length_are_taken():
    env = PortfolioEnv(transaction_cost=ProportionalCost([0.001] * 5))
    env.reset(seed=0)
    assert env.step(np.ones(6)).info["cost"] == pytest.approx(0.001 * 5 / 6)
    with pytest.raises(ValueError, match="Trading-v0 trades 1 asset"):
        TradingEnv(transaction_cost=ProportionalCost([0.001, 0.002]))


# -- spans are not numbers, Decimals and bfloat16 are ----------------------------------------

SPAN = np.timedelta64(5)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda value: PortfolioEnv(n_assets=2, sigma=value), ValueError),
        (lambda value: GBM(sigma=value), ValueError),
        (lambda value: ProportionalCost(value), TypeError),
    ],
    ids=["PortfolioEnv", "GBM", "ProportionalCost"],
)
def test_a_timedelta64_in_a_list_is_refused_as_a_bare_one_is(make, error):
    # NumPy's float cast of an object array counts a span's units: [0.2, span] was [0.2, 5.0]
    for value in (SPAN, [0.2, SPAN]):
        with pytest.raises(error, match="must be real numbers, got timedelta64"):
            make(value)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LimitOrderBookEnv(levels=SPAN),
        lambda: GBM(n_assets=SPAN),
        lambda: as_float("dt", SPAN),
    ],
    ids=["int", "simulator-int", "simulator-float"],
)
def test_a_timedelta64_is_no_int_nor_float_parameter(make):
    with pytest.raises(ValueError, match=r"must be an? .*, got timedelta64"):
        make()


def test_one_decimal_for_a_per_asset_parameter_is_one_number_for_every_asset():
    env = PortfolioEnv(n_assets=3, mu=Decimal("0.25"), sigma=[Decimal("0.5")] * 3)
    assert env.mu == 0.25 and env.sigma.tolist() == [0.5] * 3
    env.mu = Decimal("-0.5")
    assert env.mu == -0.5
    with pytest.raises(ValueError, match=r"^sigma must be a finite number >= 0, got -1\.0\.$"):
        env.sigma = Decimal("-1")
    assert ProportionalCost(Decimal("0.001")).rate == 0.001


def test_a_bfloat16_per_asset_array_is_taken_as_the_floats_it_holds():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.array([0.5, 0.25], ml_dtypes.bfloat16)
    assert PortfolioEnv(n_assets=2, mu=values).mu.tolist() == [0.5, 0.25]
    assert sekai.make("Portfolio-v0", n_assets=2, sigma=values).unwrapped.sigma.tolist() == [
        0.5,
        0.25,
    ]
    assert ProportionalCost(values / 1024).rate.tolist() == [0.5 / 1024, 0.25 / 1024]
