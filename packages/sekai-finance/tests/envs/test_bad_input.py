"""Bad input to the finance envs and their toolkit: clear errors naming the argument, no
numpy internals, nothing accepted that would misbehave later (finance.md §3.5)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

import sekai
import sekai.finance.rewards as rewards_module
from sekai.envs.finance import (
    LimitOrderBookEnv,
    LimitOrderBookMarket,
    MarketMakingEnv,
    OptimalExecutionEnv,
    PortfolioEnv,
    TradingEnv,
)
from sekai.envs.finance._common import EPISODE_OVER
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.error import InvalidAction, ResetRequired
from sekai.finance import (
    GBM,
    CompositeCost,
    FixedStart,
    LogReturn,
    MarketModel,
    ProportionalCost,
    RandomStart,
    RewardFunction,
    SequentialStart,
    Simulation,
)
from sekai.utils._equal import structurally_equal
from sekai.vector import NativeVecEnv

HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 100)))
SHORT = {"episode_length": 5, "lookback": 3}

# -- numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: TradingEnv(mu=10**400), "mu must be a finite number, got an int too large"),
        (lambda: TradingEnv(capital=-(10**400)), "capital must be a finite number > 0"),
        (lambda: TradingEnv(episode_length=10**30), "episode_length must be an int >= 1 that"),
        (lambda: PortfolioEnv(n_assets=2**63), "n_assets must be an int >= 1 that fits in 64"),
        (lambda: PortfolioEnv(n_assets=2, sigma=["0.1", "0.2"]), "sigma must be a number or 2"),
        (lambda: PortfolioEnv(n_assets=2, mu=[1, 10**400]), "mu must be a number or 2"),
        (
            lambda: PortfolioEnv(n_assets=2, corr=np.eye(2) + 0.5j * (1 - np.eye(2))),
            "corr must be a square matrix of real numbers .*complex",
        ),
        (
            lambda: PortfolioEnv(n_assets=2, corr=np.eye(2, dtype=bool)),
            "corr must be a square matrix of real numbers .*bools",
        ),
    ],
)
def test_numbers_that_are_not_finite_reals_are_refused_naming_the_parameter(
    build: Callable[[], object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build()


NOT_FLOATS = [
    pytest.param(10**400, id="huge"),
    pytest.param(-(10**400), id="-huge"),
    pytest.param(np.nan, id="nan"),
    pytest.param(np.inf, id="inf"),
]


@pytest.mark.parametrize("value", NOT_FLOATS)
@pytest.mark.parametrize("name", ["max_leverage", "cash_rate", "margin_rate", "borrow_rate"])
def test_market_account_parameters_must_be_finite_floats(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be a finite number"):
        sekai.make("Market-v0", **{name: value})


@pytest.mark.parametrize("env", [LimitOrderBookEnv, LimitOrderBookMarket])
def test_a_mid_price_beyond_64_bits_is_refused_at_construction(env: type) -> None:
    with pytest.raises(ValueError, match=r"^mid_price must be an int >= 20 that fits in 64 bits"):
        env(mid_price=10**400)
    env(mid_price=2**53 // 80).reset(seed=0)  # the largest whose P&L is exact at 20 lots


def test_negative_zero_offset_gives_a_space_that_samples() -> None:
    env = MarketMakingEnv(max_offset=-0.0)
    assert env.action_space.sample().tolist() == [0.0, 0.0]
    assert sekai.Box(0.0, -0.0, shape=(2,)).sample().tolist() == [0.0, 0.0]


# -- models -------------------------------------------------------------------------------------


class Returns(MarketModel):
    """A one-asset model returning whatever ``make(n_steps, n_paths)`` builds."""

    n_assets = 1
    dt = 1 / 252

    def __init__(self, make: Callable[[int, int | None], object]) -> None:
        self.make = make

    def simulate(self, rng, n_steps, *, n_paths=None):  # type: ignore[no-untyped-def]
        return self.make(n_steps, n_paths)

    def __repr__(self) -> str:
        return "Returns()"


def _path(rows: int, columns: int = 1, value: float = 100.0) -> Simulation:
    return Simulation(np.full((rows, columns), value))


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda n, k: np.ones((n + 1, 1)), TypeError, r"must return a sekai.finance.Simulation"),
        (lambda n, k: _path(n), ValueError, r"shape \(8, 1\); Trading-v0 asked for 8 steps"),
        (lambda n, k: _path(n + 1, 3), ValueError, r"shape \(9, 3\).*of 1 asset\(s\)"),
        (lambda n, k: _path(n + 1, value=0.0), ValueError, "not all finite and > 0"),
        (lambda n, k: _path(n + 1, value=np.nan), ValueError, "not all finite and > 0"),
    ],
)
def test_what_a_user_model_simulates_is_checked(make, error, message) -> None:  # type: ignore[no-untyped-def]
    env = TradingEnv(model=Returns(make), **SHORT)
    with pytest.raises(error, match=message):
        env.reset(seed=0)


def test_a_user_model_that_ignores_n_paths_is_named_on_the_native_env() -> None:
    vec = TradingVecEnv(2, model=Returns(lambda n, k: _path(n + 1)), **SHORT)
    with pytest.raises(ValueError, match=r"Returns\(\).simulate\(\) returned prices of shape"):
        vec.reset(seed=0)


@pytest.mark.parametrize("cls", [TradingEnv, PortfolioEnv])
def test_a_model_class_instead_of_an_instance_is_refused(cls: type) -> None:
    with pytest.raises(TypeError, match=r"got the class GBM: pass GBM\(...\)"):
        cls(model=GBM)


# -- samplers and the start option ----------------------------------------------------------------


def test_an_array_is_not_a_sampler() -> None:
    with pytest.raises(ValueError, match="sampler must be an EpisodeSampler"):
        TradingEnv(prices=HISTORY, sampler=np.array([1, 2]), **SHORT)


def test_a_fixed_start_beyond_the_history_is_refused_when_the_env_is_built() -> None:
    # The history fixes the windows at construction: no need to wait for the first reset.
    last = len(HISTORY) - SHORT["episode_length"] - SHORT["lookback"] - 1  # the last window
    TradingEnv(prices=HISTORY, sampler=last, **SHORT).reset(seed=0)
    match = rf"sampler FixedStart\({last + 1}\) does not fit this history: start {last + 1} is "
    with pytest.raises(ValueError, match=match):
        TradingEnv(prices=HISTORY, sampler=last + 1, **SHORT)
    env = PortfolioEnv(prices=HISTORY[:, None], **SHORT)
    with pytest.raises(ValueError, match="does not fit this history"):
        env.sampler = 10**6
    vec = TradingVecEnv(2, prices=HISTORY, **SHORT)
    for value in (10**6, [0, 10**6]):
        with pytest.raises(ValueError, match="does not fit this history"):
            vec.set_attr("sampler", value)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0", "Market-v0"])
@pytest.mark.parametrize("sampler", ["sequential", 7, SequentialStart(start=3)])
def test_a_sampler_without_a_history_is_refused(env_id: str, sampler: object) -> None:
    # Simulated episodes have no windows to choose: the sampler would be ignored silently.
    simulates = "market (pass data=" if env_id == "Market-v0" else "prices (pass prices= or data="
    match = rf"sampler={re.escape(repr(sampler))} needs a price history; this env simulates its "
    match += re.escape(simulates)
    with pytest.raises(ValueError, match=match):
        sekai.make(env_id, sampler=sampler)
    env = sekai.make(env_id, sampler=RandomStart())  # the default is what simulation does
    with pytest.raises(ValueError, match="needs a price history"):
        env.unwrapped.sampler = sampler  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="needs a price history"):
        sekai.make_vec(env_id, 2, sampler=sampler)


@pytest.mark.parametrize("value", ["sequential", [FixedStart(1), FixedStart(2)]])
def test_a_native_vec_env_without_a_history_refuses_a_sampler(value: object) -> None:
    vec = TradingVecEnv(2, **SHORT)
    with pytest.raises(ValueError, match=r"needs a price history.*or leave sampler='random'"):
        vec.set_attr("sampler", value)
    vec.set_attr("sampler", "random")


@pytest.mark.parametrize(
    "start", [np.timedelta64(1, "D"), datetime.timedelta(days=1), [3], {"row": 3}]
)
def test_a_start_option_of_another_type_names_the_option(start: object) -> None:
    env = TradingEnv(prices=HISTORY, **SHORT)
    with pytest.raises(TypeError, match=r"options\['start'\] must be a row position"):
        env.reset(options={"start": start})


def test_a_huge_start_row_is_out_of_range() -> None:
    env = TradingEnv(
        data=sekai.finance.MarketData(HISTORY, timestamps=np.arange(100) * 10), **SHORT
    )
    with pytest.raises(ValueError, match="is not a valid first decision"):
        env.reset(options={"start": 10**400})


# -- a reset refused for its options -------------------------------------------------------------

REFUSED_OPTIONS = [
    ("Trading-v0", SHORT, {"bogus": 1}),
    ("Trading-v0", SHORT, {"start": 3}),  # a simulated market has no row to start at
    ("Trading-v0", {**SHORT, "prices": HISTORY}, {"start": 10**400}),
    ("Portfolio-v0", SHORT, {"bogus": 1}),
    ("Portfolio-v0", SHORT, {"start": 3}),
    ("Market-v0", SHORT, {"bogus": 1}),
    ("Market-v0", SHORT, {"start": 3}),
    ("MarketMaking-v0", {}, {"bogus": 1}),
    ("OptimalExecution-v0", {}, {"bogus": 1}),
    ("LimitOrderBook-v0", {}, {"bogus": 1}),
]


def _continued(env: sekai.Env[Any, Any]) -> list[Any]:
    """An unseeded reset (the env's stream goes on) and a few steps with seeded actions."""
    env.action_space.seed(0)
    trace: list[Any] = [env.reset().observation]
    for _ in range(5):
        result = env.step(env.action_space.sample(mask=sekai.get_action_mask(env)))
        trace.append((result.observation, result.reward, result.info))
        if result.done:
            break
    return trace


@pytest.mark.parametrize(("env_id", "kwargs", "options"), REFUSED_OPTIONS)
def test_a_reset_refused_for_its_options_leaves_the_env_as_it_was(
    env_id: str, kwargs: dict[str, Any], options: dict[str, Any]
) -> None:
    # Not reseeded: the next reset() continues the stream as if the refused one never happened.
    env, twin = sekai.make(env_id, **kwargs), sekai.make(env_id, **kwargs)
    env.reset(seed=1)
    twin.reset(seed=1)
    with pytest.raises(ValueError):
        env.reset(seed=2, options=options)
    assert structurally_equal(_continued(env), _continued(twin))


def _vec_continued(vec: sekai.VecEnv[Any, Any]) -> list[Any]:
    """``_continued`` for a vector env: an unseeded reset, then steps with seeded actions."""
    vec.batch_action_space.seed(0)
    trace: list[Any] = [vec.reset().observations]
    for _ in range(5):
        result = vec.step(vec.batch_action_space.sample())
        trace.append((result.observations, result.rewards, result.infos))
    return trace


@pytest.mark.parametrize(
    ("env_id", "kwargs", "options"),
    [case for case in REFUSED_OPTIONS if case[0] != "Market-v0" and "LimitOrder" not in case[0]],
)
def test_a_native_reset_refused_for_every_sub_env_leaves_the_env_as_it_was(
    env_id: str, kwargs: dict[str, Any], options: dict[str, Any]
) -> None:
    # The native backend, as the others: no sub-env was reset, so nothing is reseeded.
    vec, twin = sekai.make_vec(env_id, 2, **kwargs), sekai.make_vec(env_id, 2, **kwargs)
    assert isinstance(vec.unwrapped, NativeVecEnv)
    vec.reset(seed=1)
    twin.reset(seed=1)
    with pytest.raises(ValueError):
        vec.reset(seed=2, options=options)
    with pytest.raises(ValueError):
        vec.reset(seed=[3, None], options=[options, options])
    assert structurally_equal(_vec_continued(vec), _vec_continued(twin))


# -- costs and rewards -----------------------------------------------------------------------------


def test_cost_model_errors_name_the_argument_and_the_mistake() -> None:
    with pytest.raises(TypeError, match=r"CompositeCost takes a list of CostModels"):
        CompositeCost(ProportionalCost(0.1))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rate must be real numbers, got complex numbers"):
        ProportionalCost(1j)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rate must be real numbers, got strings"):
        ProportionalCost(["0.1", "0.2"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"rate has 2 per-asset values but trades has shape"):
        ProportionalCost([0.1, 0.2])([0.1, 0.2, 0.3])
    env = TradingEnv()
    with pytest.raises(ValueError, match="cost_model must be finite and non-negative, got -1"):
        env.cost_model = -1


@pytest.mark.parametrize("weight", [np.nan, np.inf, 10**400])
def test_reward_weights_and_constants_must_be_finite(weight: float) -> None:
    with pytest.raises(ValueError, match="reward weights and constants must be finite"):
        LogReturn() * weight
    with pytest.raises(ValueError, match="reward weights and constants must be finite"):
        LogReturn() + weight


class _Returning(RewardFunction):
    def __init__(self, value: object) -> None:
        self.value = value

    def __call__(self, outcome):  # type: ignore[no-untyped-def]
        return self.value


@pytest.mark.parametrize("value", [np.array([1.0, 2.0]), "0.5"])
def test_a_single_env_reward_that_is_not_one_number_is_named(value: object) -> None:
    env = TradingEnv(reward=_Returning(value))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"_Returning\(\) returned .* one real number"):
        env.step(1)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (np.array([True, False]), r"an array of bool \(2,\)"),
        (np.array(["1", "1"]), r"an array of <U1 \(2,\)"),
        ("1", "str '1'"),
        (True, "bool True"),
        ([1.0, "1"], "str '1'"),
        ([0.5, True], "bool True"),  # NumPy reads the list as floats
        ([np.True_, 0.5], r"bool (np\.)?True_?"),
        (np.array([1.0, None], dtype=object), "NoneType None"),
    ],
)
def test_a_native_batch_reward_that_is_not_real_numbers_is_refused_as_the_single_env_does(
    value: object, shown: str
) -> None:
    vec = sekai.make_vec("Trading-v0", 2, reward=_Returning(value))
    assert isinstance(vec, TradingVecEnv)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=rf"_Returning\(\) returned {shown}; for a batch .* real"):
        vec.step(np.array([2, 2]))


@pytest.mark.parametrize(
    "value", [np.array([1, 2]), np.array([0.5, 1.5], np.float32), 2, [0.5, Decimal("1.5")]]
)
def test_a_native_batch_reward_of_real_numbers_is_taken_as_float64(value: object) -> None:
    vec = sekai.make_vec("Trading-v0", 2, reward=_Returning(value))
    vec.reset(seed=0)
    rewards = vec.step(np.array([2, 2])).rewards
    assert rewards.dtype == np.float64
    np.testing.assert_array_equal(rewards, np.broadcast_to(np.asarray(value, float), (2,)))


def test_a_native_batch_reward_list_of_floats_skips_the_per_item_check(monkeypatch) -> None:
    # Per step at 1024 sub-envs: a list of Python floats is read by NumPy, not item by item.
    vec = sekai.make_vec("Trading-v0", 1024, reward=_Returning([0.25] * 1024))
    vec.reset(seed=0)
    monkeypatch.setattr(rewards_module, "real_float", None)
    np.testing.assert_array_equal(vec.step(np.full(1024, 2)).rewards, np.full(1024, 0.25))


# -- actions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_id", "action"),
    [
        ("MarketMaking-v0", ["0.5", "0.5"]),
        ("OptimalExecution-v0", [10**400]),
        ("Portfolio-v0", ["0.1"] * 6),
        ("Portfolio-v0", [10**400] + [0.1] * 5),
    ],
)
def test_string_and_huge_int_actions_are_invalid_actions(env_id: str, action: object) -> None:
    env = sekai.make(env_id)
    env.reset(seed=0)
    with pytest.raises(InvalidAction):
        env.step(action)


# -- parameters lowered mid-episode ----------------------------------------------------------------


def test_optimal_execution_observations_stay_in_the_space_when_parameters_drop() -> None:
    env = OptimalExecutionEnv()
    vec = OptimalExecutionVecEnv(2)
    env.reset(seed=0)
    vec.reset(seed=0)
    for _ in range(3):
        env.step(np.array([0.1], np.float32))
        vec.step(np.full((2, 1), 0.1, np.float32))
    env.X0 = 10.0
    env.n_steps = 2
    vec.set_attr("X0", 10.0)
    vec.set_attr("n_steps", 2)
    single = env._observation()
    batch = vec._build_observation()
    assert env.observation_space.contains(single)
    assert all(env.observation_space.contains(row) for row in batch)
    assert single[:2].tolist() == [1.0, 0.0] and batch[:, :2].tolist() == [[1.0, 0.0]] * 2
    assert env.time_remaining == 0.0 and vec.time_remaining.tolist() == [0.0, 0.0]


def test_market_making_time_remaining_does_not_go_negative() -> None:
    env = MarketMakingEnv()
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.array([0.5, 0.5], np.float32))
    env.n_steps = 2
    assert env.time_remaining == 0.0


def test_a_sub_env_restarting_with_a_lower_x0_leaves_the_others_clipped_into_the_space() -> None:
    vec = OptimalExecutionVecEnv(2)
    vec.reset(seed=0)
    vec.step(np.full((2, 1), 0.1, np.float32))
    vec.set_attr("X0", 10.0)
    result = vec.step(np.array([[1.0], [0.1]], np.float32))  # sub-env 0 sells out and restarts
    assert result.terminated.tolist() == [True, False]
    assert result.observations[:, 0].tolist() == [1.0, 1.0]  # 10 of 10 left; 810,000 of 10
    assert all(vec.observation_space.contains(row) for row in result.observations)


def _dated_trading() -> TradingEnv:
    timestamps = np.arange("2020-01-01", 100, dtype="datetime64[D]")
    return TradingEnv(data=sekai.finance.MarketData(HISTORY, timestamps=timestamps), **SHORT)


@pytest.mark.parametrize(
    ("start", "message"),
    [("2400-01-01", "outside the datetime64"), ("2020-01-02T00:00+01:00", "timezone")],
)
def test_a_start_date_that_cannot_be_used_is_a_value_error_saying_why(start, message) -> None:  # type: ignore[no-untyped-def]
    pd = pytest.importorskip("pandas")
    env = _dated_trading()
    with pytest.raises(ValueError, match=message):
        env.reset(options={"start": start})
    with pytest.raises(ValueError, match="timezone"):
        env.reset(options={"start": pd.Timestamp("2020-03-02", tz="UTC")})


def test_one_start_for_many_sub_envs_is_looked_up_once_and_stays_right() -> None:
    timestamps = np.arange("2020-01-01", 100, dtype="datetime64[D]")
    vec = TradingVecEnv(64, data=sekai.finance.MarketData(HISTORY, timestamps=timestamps), **SHORT)
    for start, row in [("2020-01-10", 9), (np.datetime64("2020-01-20"), 19), (12, 12), (-20, 80)]:
        infos = vec.reset(options={"start": start}).infos
        assert {info["timestamp"] for info in infos} == {timestamps[row]}


# -- built-in GBM parameters too extreme for float64 prices ---------------------------------------

EXTREME = "built-in GBM simulated a price of 0 or infinity within 282 steps"


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
@pytest.mark.parametrize("kwargs", [{"sigma": 1000.0}, {"mu": 1e6}, {"sigma": 40.0}])
def test_a_simulated_path_outside_float64_is_refused_at_reset(env_id: str, kwargs: dict) -> None:  # type: ignore[type-arg]
    # sigma=40 stays in range over the lookback and leaves it later in the episode.
    env = sekai.make(env_id, **kwargs)
    with pytest.raises(ValueError, match=EXTREME) as caught:
        env.reset(seed=0)
    name, value = next(iter(kwargs.items()))
    assert f"{name}={value!r}" in str(caught.value)
    sync = sekai.make_vec(env_id, 2, vectorization_mode="sync", **kwargs)
    with pytest.raises(ValueError, match=EXTREME):
        sync.reset(seed=0)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_native_envs_refuse_the_lookback_of_an_extreme_gbm_at_reset(env_id: str) -> None:
    vec = sekai.make_vec(env_id, 3, sigma=1000.0)
    with pytest.raises(ValueError, match=EXTREME + r".*sigma=1000\.0"):
        vec.reset(seed=0)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_native_envs_refuse_the_step_that_leaves_float64_and_change_nothing(env_id: str) -> None:
    vec = sekai.make_vec(env_id, 4, sigma=40.0)
    vec.reset(seed=0)
    actions = _holding(env_id)
    with pytest.raises(ValueError, match=EXTREME + r".*sigma=40\.0"):
        for _ in range(252):
            price, steps = vec.get_attr("price"), vec.get_attr("elapsed_steps")
            vec.step(actions)
    assert 150 < steps[0] < 252  # it happened mid-episode, and the failed step changed nothing
    assert np.array_equal(vec.get_attr("elapsed_steps"), steps)
    assert np.array_equal(np.asarray(vec.get_attr("price")), np.asarray(price))


def _holding(env_id: str) -> np.ndarray:
    """Actions no price move wipes out: flat Trading, equal long-only Portfolio weights."""
    if env_id == "Trading-v0":
        return np.ones(4, dtype=np.int64)  # position 0.0
    return np.full((4, 6), 1 / 6, dtype=np.float32)


def test_online_sub_envs_beside_model_replays_are_checked_too() -> None:
    # A wipe-out (a trade costing everything) resets sub-env 0 after the model is set: it
    # replays the model's path while the others keep simulating their extreme GBM online.
    # A model set beside a given sigma is refused, so the extreme GBM is written in privately:
    # the episodes begun before a model is set still simulate the template's parameters.
    vec = TradingVecEnv(4, transaction_cost=0.6)
    vec.template._sigma, vec.template._mu = 40.0, 0.0
    vec.reset(seed=0)
    flat, long, short = 1, 2, 0  # indices into positions (-1, 0, 1)
    vec.step(np.array([long, flat, flat, flat]))
    vec.set_attr("model", GBM(sigma=0.2, dt=1 / 252))
    result = vec.step(np.array([short, flat, flat, flat]))  # turnover 2: a cost of 1.2
    assert result.terminated.tolist() == [True, False, False, False]
    with pytest.raises(ValueError, match=EXTREME + r".*sigma=40\.0"):
        for _ in range(252):
            vec.step(np.full(4, flat))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's, then ours
@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_native_envs_refuse_a_price_that_overflows_mid_episode(env_id: str) -> None:
    vec = sekai.make_vec(env_id, 4, mu=700.0, sigma=0.0)  # log price +2.8 a step: inf by ~225
    vec.reset(seed=0)
    actions = _holding(env_id)
    with pytest.raises(ValueError, match=EXTREME + r".*mu=700\.0"):
        for _ in range(252):
            steps = vec.get_attr("elapsed_steps")
            vec.step(actions)
    assert 150 < steps[0] < 252


def test_the_moving_sub_envs_are_checked_while_others_are_frozen() -> None:
    vec = TradingVecEnv(4, sigma=40.0, mu=0.0, transaction_cost=0.6, autoreset=False)
    vec.reset(seed=0)
    flat, long, short = 1, 2, 0
    vec.step(np.array([long, flat, flat, flat]))
    vec.step(np.array([short, flat, flat, flat]))  # sub-env 0 is wiped out, and freezes
    assert vec.frozen.tolist() == [True, False, False, False]
    with pytest.raises(ValueError, match=EXTREME + r".*sigma=40\.0"):
        for _ in range(252):
            vec.step(np.full(4, flat))


def _episode_over(vec: Any, actions: np.ndarray) -> tuple[str, list[int]]:
    """The ResetRequired a step raises, and every sub-env's elapsed steps after it."""
    with pytest.raises(ResetRequired) as caught:
        vec.step(actions)
    return str(caught.value), list(vec.get_attr("elapsed_steps"))


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_a_failed_autoreset_leaves_the_sub_envs_waiting_for_reset_on_every_backend(
    env_id: str,
) -> None:
    # The native env latched the refused parameters and kept raising their ValueError on
    # every step, naming the valid ones set since; sync raises ResetRequired for those sub-envs.
    actions = _holding(env_id)[:2]
    seen = {}
    for mode in ("sync", "native"):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode, episode_length=2, lookback=2)
        vec.reset(seed=0)
        vec.set_attr("sigma", 1e6)  # checked when an episode simulates its prices
        vec.step(actions)
        before = vec.get_attr("price_history")
        with pytest.raises(ValueError, match=r"within 4 steps \(mu=.*, sigma=1000000\.0, dt="):
            vec.step(actions)  # the episodes end: both autoresets simulate with sigma=1e6
        for path, old in zip(vec.get_attr("price_history"), before):
            assert np.array_equal(path[:-1], old)  # the finished episodes, as they ended
            assert np.isfinite(path).all() and len(path) == 5
        vec.set_attr("sigma", 0.2)
        seen[mode] = [_episode_over(vec, actions), _episode_over(vec, actions)]
        vec.reset(seed=1)
        assert np.isfinite(vec.step(actions).rewards).all()
    assert seen["native"] == seen["sync"]
    assert seen["native"][0] == (EPISODE_OVER, [2, 2])


def test_a_sub_env_whose_autoreset_failed_waits_while_the_others_step() -> None:
    flat, long, short = 1, 2, 0  # indices into positions (-1, 0, 1)
    seen = {}
    for mode in ("sync", "native"):
        vec = sekai.make_vec("Trading-v0", 4, vectorization_mode=mode, transaction_cost=0.6)
        vec.reset(seed=0)
        vec.step(np.array([long, flat, flat, flat]))
        vec.set_attr("sigma", 1e6)  # the running episodes keep simulating with sigma=0.2
        with pytest.raises(ValueError, match=r"sigma=1000000\.0"):
            vec.step(np.array([short, flat, flat, flat]))  # sub-env 0 is wiped out
        vec.set_attr("sigma", 0.2)
        seen[mode] = [_episode_over(vec, np.full(4, flat)) for _ in range(3)]
    assert seen["native"] == seen["sync"]
    assert [steps for _, steps in seen["native"]] == [[2, 3, 3, 3], [2, 4, 4, 4], [2, 5, 5, 5]]


def test_a_step_failure_names_the_parameters_of_the_failed_episode() -> None:
    # sigma=40 leaves float64 mid-episode; set to 0.2 after the reset, it is not what failed
    vec = sekai.make_vec("Trading-v0", 4, sigma=40.0)
    vec.reset(seed=0)
    vec.set_attr("sigma", 0.2)
    hold = np.ones(4, dtype=np.int64)
    with pytest.raises(ValueError, match=EXTREME + r" \(mu=0\.05, sigma=40\.0, dt="):
        for _ in range(252):
            steps = list(vec.get_attr("elapsed_steps"))
            vec.step(hold)
    assert list(vec.get_attr("elapsed_steps")) == steps  # the failed step changed nothing
    with pytest.raises(ResetRequired, match="The episode is over"):
        vec.step(hold)  # the sub-envs whose price failed wait for reset(); the others stepped
    after = list(vec.get_attr("elapsed_steps"))
    assert all(a in (s, s + 1) for a, s in zip(after, steps)) and after != steps
    vec.reset(seed=1)
    assert np.isfinite(vec.step(hold).rewards).all()


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize(
    ("start", "error", "match"),
    [
        ("10", TypeError, r"numeric time axis: a number or Time\(number\)\); got str '10'"),
        ("2020-01-05", TypeError, r"must be a row position \(an int\) or a timestamp"),
        (float("nan"), ValueError, r"options\['start'\] must not be NaN"),
    ],
)
def test_a_start_option_on_a_numeric_axis_names_the_option(
    native: bool, start: object, error: type, match: str
) -> None:
    if native:
        env: Any = sekai.make_vec("Trading-v0", 2, prices=HISTORY, **SHORT)
    else:
        env = TradingEnv(prices=HISTORY, **SHORT)
    with pytest.raises(error, match=match):
        env.reset(options={"start": start})


def test_a_position_beyond_float64_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="positions must be a sequence of at least 2 finite"):
        TradingEnv(positions=(0, 10**400))


def test_numbers_in_zero_dimensional_arrays_are_numbers() -> None:
    assert TradingEnv(sigma=np.array(0.2)).sigma == 0.2
    assert PortfolioEnv(mu=np.array(0.1)).mu == 0.1
    vec = sekai.make_vec("Portfolio-v0", 2)
    vec.set_attr("mu", np.array(0.1))
    assert vec.get_attr("mu") == [0.1, 0.1]
    with pytest.raises(ValueError, match=r"sigma must be a finite number >= 0, got -0\.2"):
        TradingEnv(sigma=np.array(-0.2))
    # the cost rate and the start option too, as every other number
    assert TradingEnv(transaction_cost=np.array(0.002)).cost_model.rate == 0.002
    env = TradingEnv(prices=HISTORY, **SHORT)
    assert env.reset(options={"start": np.array(40)}).info["timestamp"] == 40
    native = sekai.make_vec("Trading-v0", 2, prices=HISTORY, **SHORT)
    assert [i["timestamp"] for i in native.reset(options={"start": np.int64(40)}).infos] == [40, 40]
    assert [i["timestamp"] for i in native.reset(options={"start": np.array(40)}).infos] == [40, 40]
    with pytest.raises(TypeError, match=r"options\['start'\] must be .*got a bool"):
        env.reset(options={"start": np.array(True)})


@pytest.mark.parametrize("positions", [(0, 0), (-1.0, 0.0, -0.0, 1.0), (1, 0.5, 1.0)])
def test_repeated_positions_are_refused(positions: tuple[float, ...]) -> None:
    # Two actions for one target position: an agent could never tell them apart.
    with pytest.raises(ValueError, match=r"positions must be distinct .* repeated"):
        TradingEnv(positions=positions)


def test_a_price_panel_without_assets_names_prices() -> None:
    with pytest.raises(
        ValueError, match=r"prices must have at least 1 asset \(column\), got shape"
    ):
        PortfolioEnv(np.empty((100, 0)))


@pytest.mark.parametrize("env_id", ["Portfolio-v0", "OptimalExecution-v0", "MarketMaking-v0"])
@pytest.mark.parametrize("mode", ["sync", "native"])
def test_bool_box_actions_are_the_numbers_1_and_0_on_every_backend(env_id: str, mode: str) -> None:
    env = sekai.make(env_id)
    flags = np.ones(env.action_space.shape, dtype=bool)
    assert flags in env.action_space  # as Box.contains says
    env.reset(seed=0)
    as_bool = env.step(flags)
    env.reset(seed=0)
    assert as_bool.reward == env.step(flags.astype(np.float64)).reward
    vec = sekai.make_vec(env_id, 2, vectorization_mode=mode)
    vec.reset(seed=0)
    rewards = vec.step(np.stack([flags, flags])).rewards
    vec.reset(seed=0)
    assert rewards.tolist() == vec.step(np.ones((2, *flags.shape))).rewards.tolist()
    vec.close()


@pytest.mark.parametrize(
    ("env_id", "name", "what"),
    [
        ("OptimalExecution-v0", "tau", "Period length total_time / n_steps"),
        ("OptimalExecution-v0", "time_remaining", "Time left"),
        ("MarketMaking-v0", "dt", "Step length total_time / n_steps"),
        ("MarketMaking-v0", "wealth", "cash + inventory * mid"),
        ("Trading-v0", "position", "The current position"),
        ("Portfolio-v0", "weights", "Current drifted weights"),
        ("Portfolio-v0", "elapsed_steps", "Steps taken in the current episode"),
        ("LimitOrderBook-v0", "elapsed_steps", "Steps taken in the current episode"),
    ],
)
def test_setting_a_read_only_property_says_what_it_is_and_what_to_do(
    env_id: str, name: str, what: str
) -> None:
    env = sekai.make(env_id).unwrapped
    owner = type(env).__name__
    message = rf"^{owner}\.{name} is read-only \({re.escape(what)}.*\): it follows from the env"
    with pytest.raises(AttributeError, match=message):
        setattr(env, name, 0.1)
    vec = sekai.make_vec(env_id, 2, vectorization_mode="sync")
    with pytest.raises(AttributeError, match=rf"{owner}\.{name} is read-only"):
        vec.set_attr(name, 0.1)
    vec.close()
