"""Parameters that must be refused where they are given: models, bools, prices, cost rates."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import sekai
from sekai.envs.finance import LimitOrderBookEnv, MarketMakingEnv, PortfolioEnv, TradingEnv
from sekai.finance import GBM, MarketData, ProportionalCost, SpreadCost
from sekai.finance._values import check_number
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


# -- dt and the built-in GBM's parameters follow the price source -------------------------------


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("Trading-v0", {"model": GBM(0.0, 0.2, dt=1 / 52)}),
        ("Portfolio-v0", {"model": GBM(n_assets=2, dt=1 / 52)}),
        ("Market-v0", {"model": GBM(n_assets=2, dt=1 / 52)}),
    ],
)
def test_a_dt_other_than_the_models_is_refused_on_every_backend(env_id, kwargs):
    # The model moves prices by its own dt: another dt= would misreport every step's length.
    message = r"dt=1/252 contradicts the model's dt=1/52: its GBM simulates steps of 1/52"
    with pytest.raises(ValueError, match=message):
        sekai.make(env_id, dt=1 / 252, **kwargs)
    env = sekai.make(env_id, dt=1 / 52, **kwargs)  # the model's own dt is taken
    assert env.reset(seed=0).info["dt"] == pytest.approx(1 / 52)
    for mode in (None, "sync") if env_id != "Market-v0" else ("sync",):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode, **kwargs)
        with pytest.raises(ValueError, match=message):
            vec.set_attr("dt", 1 / 252)
        assert vec.get_attr("dt") == [pytest.approx(1 / 52)] * 2
        vec.set_attr("dt", None)  # follows the model


def test_a_dt_other_than_market_v0s_default_market_names_that_market():
    # The caller gave no model: the message names the one Market-v0 built, not "the model".
    message = (
        r"^dt=1/52 contradicts Market-v0's default market: default_market\(\) simulates steps "
        r"of 1/252 years, which info\['dt'\] must report; leave dt out, or pass model= a model "
        r"built with the dt you want\.$"
    )
    with pytest.raises(ValueError, match=message):
        sekai.make("Market-v0", dt=1 / 52)
    vec = sekai.make_vec("Market-v0", 2, vectorization_mode="sync")
    with pytest.raises(ValueError, match=message):
        vec.set_attr("dt", 1 / 52)
    assert vec.get_attr("dt") == [pytest.approx(1 / 252)] * 2


@pytest.mark.parametrize("dt", [1e-310, 1e-300])
def test_a_tiny_dt_is_refused_by_the_default_markets_message(dt):
    # 1 / 1e-310 overflows: printing the dt raised OverflowError instead of the refusal
    message = rf"^dt={dt!r} contradicts Market-v0's default market: default_market\(\) "
    with pytest.raises(ValueError, match=message):
        sekai.make("Market-v0", dt=dt)
    with pytest.raises(ValueError, match=rf"^dt={dt!r} contradicts the model's dt=1/252"):
        sekai.make("Trading-v0", dt=dt, model=GBM())


def test_setting_a_model_whose_dt_contradicts_an_explicit_dt_is_refused():
    env = TradingEnv(dt=1 / 52)
    with pytest.raises(ValueError, match=r"dt=1/52 contradicts the model's dt=1/252"):
        env.model = GBM()
    assert env.model is None and env.dt == pytest.approx(1 / 52)
    env.dt = None
    env.model = GBM()
    assert env.dt == pytest.approx(1 / 252)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: TradingEnv(model=GBM(), mu=0.3),
            r"mu= is a parameter of Trading-v0's built-in GBM, which model=GBM\(...\) replaces: "
            "it would be ignored; leave it out, or give it to the model",
        ),
        (
            lambda: TradingEnv(HISTORY, sigma=0.5, s0=10.0),
            r"sigma=, s0= are parameters of Trading-v0's built-in GBM, which prices= replaces",
        ),
        (
            lambda: PortfolioEnv(model=GBM(n_assets=2), mu=[0.0, 0.3], sigma=[0.9, 0.1]),
            r"mu=, sigma= are parameters of Portfolio-v0's built-in GBM, which model=GBM",
        ),
        (
            lambda: PortfolioEnv(
                data=MarketData(np.ones((9, 2))), corr=np.eye(2), lookback=2, episode_length=3
            ),
            r"corr= is a parameter of Portfolio-v0's built-in GBM, which data= replaces: it "
            r"would be ignored; leave it out\.",
        ),
    ],
)
def test_built_in_gbm_parameters_given_with_another_price_source_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_built_in_gbm_parameters_left_at_their_defaults_do_not_count_as_given():
    assert TradingEnv(model=GBM(), dt=None).mu == 0.05  # the default stays readable
    assert TradingEnv(HISTORY).sigma == 0.2 and TradingEnv(HISTORY).s0 == 100.0
    env = sekai.make("Trading-v0", mu=0.05, sigma=0.2, s0=100.0)  # explicit, simulating: taken
    assert (env.unwrapped.mu, env.unwrapped.sigma, env.unwrapped.s0) == (0.05, 0.2, 100.0)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "name", "value", "source"),
    [
        ("Trading-v0", {"prices": HISTORY}, "mu", 5.0, "the price history"),
        ("Trading-v0", {"model": GBM()}, "s0", 10.0, r"model=GBM\(...\)"),
        ("Portfolio-v0", {"prices": np.stack([HISTORY, HISTORY[::-1]], 1)}, "sigma", 0.1, "the"),
        ("Portfolio-v0", {"model": GBM(n_assets=2)}, "corr", np.eye(2), "model="),
    ],
)
def test_setting_a_built_in_gbm_parameter_that_would_be_unused_is_refused(
    env_id, kwargs, name, value, source
):
    for mode in (None, "sync"):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode, **kwargs)
        before = vec.get_attr(name)
        with pytest.raises(
            ValueError, match=f"{name}= is a parameter of {env_id}'s built-in GBM, which {source}"
        ):
            vec.set_attr(name, value)
        assert all(np.array_equal(a, b) for a, b in zip(vec.get_attr(name), before))


@pytest.mark.parametrize(
    ("env_id", "name", "value", "model"),
    [
        ("Trading-v0", "sigma", 0.9, GBM(0.0, 0.2)),
        ("Portfolio-v0", "mu", 0.1, GBM(n_assets=5)),
        ("Portfolio-v0", "corr", np.eye(5), GBM(n_assets=5)),
    ],
)
def test_a_model_set_after_a_built_in_gbm_parameter_is_refused(env_id, name, value, model):
    # In either order the parameter would be stored, reported by get_attr, and never simulated.
    message = (
        rf"^{name}= is a parameter of {env_id}'s built-in GBM, which model=GBM\(...\) replaces: "
        r"it would be ignored; leave it out, or give it to the model\.$"
    )
    given = sekai.make(env_id, **{name: value}).unwrapped
    set_later = sekai.make(env_id).unwrapped
    setattr(set_later, name, value)
    for env in (given, set_later):
        with pytest.raises(ValueError, match=message):
            env.model = model
        assert env.model is None
    for mode in (None, "sync"):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode, **{name: value})
        with pytest.raises(ValueError, match=message):
            vec.set_attr("model", model)
        assert vec.get_attr("model") == [None, None]
    untouched = sekai.make(env_id).unwrapped
    untouched.model = model  # nothing given: the model replaces the built-in GBM's defaults
    assert untouched.model is model


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
# Three validators of per-asset numbers, each given the value to check, and what it raises.
PER_ASSET = pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda value: PortfolioEnv(n_assets=2, sigma=value), ValueError),
        (lambda value: GBM(sigma=value), ValueError),
        (lambda value: ProportionalCost(value), TypeError),
    ],
    ids=["PortfolioEnv", "GBM", "ProportionalCost"],
)


@PER_ASSET
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


@pytest.mark.parametrize(
    ("item", "what"),
    [
        (np.array(SPAN), "timedelta64"),  # np.asarray(span): NumPy's cast counted its units
        (np.array(np.datetime64("2020-01-01")), "datetimes"),  # its days since 1970
        (np.array(None, dtype=object), "None"),  # NaN
    ],
    ids=["timedelta64", "datetime64", "None"],
)
@PER_ASSET
def test_a_0d_array_in_a_list_is_refused_as_the_value_it_holds_is(make, error, item, what):
    with pytest.raises(error, match=f"must be real numbers, got {what}"):
        make([0.2, item])


@pytest.mark.parametrize(
    ("make", "read"),
    [
        (lambda d: TradingEnv(sigma=d), lambda env: env.sigma),
        (lambda d: MarketMakingEnv(sigma=d), lambda env: env.sigma),
        (lambda d: PortfolioEnv(n_assets=2, sigma=d), lambda env: env.sigma),
        (lambda d: TradingEnv(transaction_cost=d), lambda env: env.cost_model.rate),
        (lambda d: ProportionalCost(d), lambda cost: cost.rate),
        (lambda d: GBM(sigma=d), lambda model: model.sigma),
        (lambda d: GBM(dt=d), lambda model: model.dt),
        (lambda d: as_float("dt", d), lambda number: number),
        (lambda d: check_number("rate", d), lambda number: number),
    ],
    ids=[
        "scalar",
        "session",
        "per-asset",
        "transaction_cost",
        "cost-rate",
        "simulator-per-asset",
        "simulator-scalar",
        "as_float",
        "check_number",
    ],
)
def test_a_decimal_is_a_number_for_every_float_parameter(make, read):
    # one rule: a Decimal is a real number, one number for every asset as a float is
    assert float(np.mean(read(make(Decimal("0.125"))))) == 0.125
    with pytest.raises(ValueError, match=r"Decimal\('1E\+400'\), too large for a float64"):
        make(Decimal("1e400"))  # float() makes it infinite, a value the user never wrote
    with pytest.raises(ValueError) as signalling:  # as a quiet one, not "no number"
        make(Decimal("sNaN"))
    with pytest.raises(ValueError) as quiet:
        make(Decimal("NaN"))
    assert str(signalling.value).replace("sNaN", "NaN") == str(quiet.value)


def test_a_decimal_is_a_number_for_the_toolkits_other_number_arguments():
    from sekai.finance import DifferentialSharpe, LogReturn, Time
    from sekai.finance.features import asof_join

    assert repr(LogReturn() * Decimal("2")) == "2.0 * LogReturn()"  # a float: it mixes
    assert DifferentialSharpe(eta=Decimal("0.25")).eta == 0.25
    assert Time(Decimal("1.5")) == Time(1.5)
    with pytest.raises(ValueError, match="too large"):
        Time(Decimal("1e400"))
    joined = asof_join(np.array([1.0, 2.0]), np.array([0.5]), np.array([7.0]), lag=Decimal("1"))
    assert np.isnan(joined[0]) and joined[1] == 7.0


def test_a_decimal_beyond_float64_in_a_list_is_named_too_large():
    with pytest.raises(
        ValueError, match=r"\(mu holds Decimal\('1E\+400'\), too large for a float64\.\)$"
    ):
        PortfolioEnv(n_assets=3, mu=[0.1, Decimal("1e400"), 0.1])
    with pytest.raises(ValueError, match=r"^mu must be finite numbers, got \[0\.1, nan\]\.$"):
        PortfolioEnv(n_assets=2, mu=[0.1, Decimal("sNaN")])


def test_one_decimal_for_a_per_asset_parameter_is_one_number_for_every_asset():
    env = PortfolioEnv(n_assets=3, mu=Decimal("0.25"), sigma=[Decimal("0.5")] * 3)
    assert env.mu == 0.25 and env.sigma.tolist() == [0.5] * 3
    env.mu = Decimal("-0.5")
    assert env.mu == -0.5
    with pytest.raises(  # shown as given, as check_number shows it
        ValueError, match=r"^sigma must be a finite number >= 0, got Decimal\('-1'\)\.$"
    ):
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


def test_an_int_argument_that_is_no_int_is_named_as_given_not_as_the_number_it_holds():
    from sekai.envs.finance._common import check_int
    from sekai.finance.simulators._checks import as_positive_int

    # a JAX bfloat16 0-d array was named "float64 np.float64(0.5)", a type the user never gave
    with pytest.raises(ValueError, match=r"^levels must be an int >= 1, got ndarray array\(0\.5\)"):
        check_int("levels", np.array(0.5))
    with pytest.raises(ValueError, match=r"^n_assets must be an int >= 1, got ndarray array\(0\.5"):
        as_positive_int("n_assets", np.array(0.5))
    assert check_int("levels", np.array(3)) == 3 == as_positive_int("n_assets", np.array(3))


def test_a_negative_zero_parameter_is_held_as_zero() -> None:
    # max_offset=-0.0 would give the action space Box(0.0, -0.0): high below low in sign
    env = MarketMakingEnv(max_offset=-0.0)
    assert not np.signbit(env.max_offset)
    assert not np.signbit(env.action_space.high).any()  # type: ignore[attr-defined]


def test_a_per_asset_parameter_is_held_read_only() -> None:
    env = PortfolioEnv(n_assets=2, sigma=[0.1, 0.2])
    with pytest.raises(ValueError, match="read-only"):
        env.sigma[0] = -1.0  # type: ignore[index]
    assert env.sigma.tolist() == [0.1, 0.2]  # type: ignore[union-attr]
