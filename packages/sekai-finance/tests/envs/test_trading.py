"""TradingEnv (Trading-v0), the single env."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance.trading import TradingEnv
from sekai.error import InvalidAction, ResetRequired
from sekai.finance import (
    GBM,
    DrawdownPenalty,
    FixedStart,
    LogReturn,
    MarketData,
    ProportionalCost,
    SequentialStart,
    Simulation,
    SpreadCost,
    Time,
)

PRICES = np.array([100.0, 101.0, 99.0, 102.0, 100.0, 103.0, 104.0, 101.0])


def walk(n: int = 300, seed: int = 0) -> np.ndarray:
    return 100 * np.exp(np.cumsum(np.random.default_rng(seed).normal(0.0, 0.01, n)))


def small(**kwargs) -> TradingEnv:
    return TradingEnv(PRICES, lookback=2, episode_length=3, **kwargs)


# -- spaces and defaults ----------------------------------------------------------------------


def test_default_spaces_and_metadata():
    env = TradingEnv()
    assert repr(env.observation_space) == (
        "Box(-inf, [inf, inf, inf, ..., inf, inf, 1.0], (31,), float32)"
    )
    assert repr(env.action_space) == "Discrete(3)"
    assert env.metadata == {"render_fps": 10}
    assert (env.episode_length, env.lookback, env.positions) == (252, 30, (-1.0, 0.0, 1.0))
    assert env.cost_model == ProportionalCost(0.001)
    assert isinstance(env.reward_fn, LogReturn)
    assert env.prices is None and env.data is None and env.dt == 1 / 252


def test_position_bounds_follow_the_positions():
    env = TradingEnv(positions=(0.0, 2.0))
    assert env.observation_space.low[-1] == 0.0 and env.observation_space.high[-1] == np.inf


def test_check_env_passes():
    sekai.testing.assert_env_conforms(TradingEnv(walk(), episode_length=20, lookback=5))


# -- one step by hand -------------------------------------------------------------------------


def test_reset_observation_and_info():
    env = small()
    result = env.reset(options={"start": 2})
    assert result.observation == pytest.approx(
        np.array([np.log(101 / 100), np.log(99 / 101), 0.0], np.float32)
    )
    assert result.info == {
        "equity": 1.0,
        "position": 0.0,
        "price": 99.0,
        "asset_return": 0.0,
        "cost": 0.0,
        "turnover": 0.0,
        "timestamp": 2,
        "dt": 1 / 252,
    }


def test_two_steps_by_hand_long_then_short():
    env = small()
    env.reset(options={"start": 2})
    first = env.step(2)  # go long 1.0 at 99
    r1 = 102 / 99 - 1
    growth1 = 0.999 * (1 + r1)
    assert first.reward == pytest.approx(np.log(growth1), abs=1e-15)
    assert first.info["equity"] == pytest.approx(growth1)
    assert first.info["position"] == 1.0 and first.info["turnover"] == 1.0
    assert first.info["cost"] == pytest.approx(0.001)
    assert first.info["asset_return"] == pytest.approx(r1)
    assert first.info["price"] == 102.0 and first.info["timestamp"] == 3
    assert first.observation == pytest.approx(
        np.array([np.log(99 / 101), np.log(102 / 99), 1.0], np.float32)
    )
    second = env.step(0)  # short: trade from +1 to -1
    r2 = 100 / 102 - 1
    growth2 = (1 - 0.002) * (1 - r2)
    assert second.info["turnover"] == 2.0
    assert second.info["equity"] == pytest.approx(growth1 * growth2)
    assert second.info["position"] == pytest.approx(-(1 + r2) / (1 - r2))
    assert second.reward == pytest.approx(np.log(growth2))


def test_holding_a_long_position_costs_nothing_after_entry():
    env = small()
    env.reset(options={"start": 2})
    env.step(2)
    assert env.step(2).info["cost"] == 0.0


def test_episode_truncates_after_episode_length_then_needs_reset():
    env = small()
    env.reset(options={"start": 2})
    flags = [env.step(1).truncated for _ in range(3)]
    assert flags == [False, False, True]
    with pytest.raises(ResetRequired, match="reset"):
        env.step(1)
    env.reset(options={"start": 2})
    env.step(1)


def test_wipe_out_terminates_with_zero_equity():
    prices = np.array([100.0, 100.0, 100.0, 40.0, 41.0, 42.0])
    env = TradingEnv(prices, lookback=2, episode_length=3, positions=(0.0, 3.0))
    env.reset(options={"start": 2})
    result = env.step(1)
    assert result.terminated and not result.truncated
    assert result.info["equity"] == 0.0 and result.info["position"] == 0.0
    assert result.reward == pytest.approx(np.log(1e-12))


def test_step_before_reset_raises_reset_required():
    with pytest.raises(ResetRequired):
        TradingEnv().step(0)
    for name in ("price", "timestamp", "price_history"):
        with pytest.raises(ResetRequired):
            getattr(TradingEnv(), name)


@pytest.mark.parametrize(
    "action", [3, -1, 1.0, True, "1", np.array([1, 2]), np.array([1]), np.array([[1]])]
)
def test_invalid_actions_are_refused(action):
    env = TradingEnv()
    env.reset(seed=0)
    with pytest.raises(InvalidAction):
        env.step(action)


def test_numpy_integer_actions_are_accepted():
    env = TradingEnv()
    env.reset(seed=0)
    env.step(np.int64(2))
    env.step(np.array(1))


# -- infos and state --------------------------------------------------------------------------


def test_info_values_are_python_scalars():
    env = TradingEnv(walk(), episode_length=10, lookback=5)
    for result in (env.reset(seed=0), env.step(2)):
        assert list(result.info) == [
            "equity",
            "position",
            "price",
            "asset_return",
            "cost",
            "turnover",
            "timestamp",
            "dt",
        ]
        assert all(type(v) in (float, int) for v in result.info.values())
        assert type(result.info["timestamp"]) is int


def test_state_attributes():
    env = TradingEnv(walk(), episode_length=10, lookback=5)
    env.reset(options={"start": 20})
    env.step(2)
    env.step(2)
    assert env.elapsed_steps == 2 and env.timestamp == 22
    history = env.price_history
    assert history.shape == (5 + 2 + 1,) and history[-1] == env.price
    assert history.tolist() == walk()[15:23].tolist()
    assert env.position == 1.0 and env.equity < 1.01


def test_dated_data_gives_datetime_timestamps():
    days = np.busday_offset("2020-01-01", np.arange(300), roll="forward")
    env = TradingEnv(data=MarketData(walk(), timestamps=days), lookback=5, episode_length=20)
    info = env.reset(options={"start": "2020-03-02"}).info
    assert info["timestamp"] == np.datetime64("2020-03-02")
    assert isinstance(info["timestamp"], np.datetime64)
    assert env.dt == pytest.approx(1 / MarketData(walk(), timestamps=days).periods_per_year)
    assert env.reset(options={"start": 10}).info["timestamp"] == days[10]
    with pytest.raises(ValueError, match=r"rows 5\.\.279"):
        env.reset(options={"start": 2})


# -- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": -1.0}, "sigma must be a finite number >= 0, got -1.0"),
        ({"mu": np.inf}, "mu must be a finite number"),
        ({"s0": 0.0}, "s0 must be a finite number > 0"),
        ({"episode_length": 0}, "episode_length must be an int >= 1, got 0"),
        ({"lookback": 2.5}, "lookback must be an int >= 1"),
        ({"lookback": True}, "lookback must be an int >= 1"),
        ({"capital": 0}, "capital must be a finite number > 0"),
        ({"dt": -0.1}, "dt must be a finite number > 0"),
        ({"positions": (1.0,)}, "positions must be a sequence of at least 2"),
        ({"positions": (0.0, np.nan)}, "positions must be a sequence of at least 2"),
        ({"transaction_cost": -0.1}, "transaction_cost must be finite and non-negative"),
        ({"sampler": "nope"}, "sampler must be"),
    ],
)
def test_parameters_are_validated_with_their_name_and_range(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TradingEnv(**kwargs)


@pytest.mark.parametrize(
    "name", ["episode_length", "lookback", "positions", "transaction_cost", "prices", "data"]
)
def test_fixed_parameters_are_read_only(name):
    with pytest.raises(AttributeError, match=f"{name} is fixed at construction; make a new env"):
        setattr(TradingEnv(), name, getattr(TradingEnv(), name))


def test_settable_parameters_are_validated():
    env = TradingEnv()
    env.sigma = 0.3
    env.cost_model = 0.002
    assert env.sigma == 0.3 and env.cost_model == ProportionalCost(0.002)
    with pytest.raises(ValueError, match="sigma"):
        env.sigma = -1.0
    with pytest.raises(ValueError, match="spread"):
        env.cost_model = SpreadCost()


def test_reward_is_copied():
    reward = LogReturn() - DrawdownPenalty()
    env = TradingEnv(reward=reward)
    assert env.reward_fn is not reward
    env.reward_fn = reward
    assert env.reward_fn is not reward
    with pytest.raises(TypeError):
        env.reward_fn = "log"


def test_sigma_zero_makes_a_deterministic_drift():
    env = TradingEnv(sigma=0.0, mu=0.252, episode_length=5, lookback=2, transaction_cost=0.0)
    env.reset(seed=0)
    result = env.step(2)
    assert result.reward == pytest.approx(0.001)


# -- price sources ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        (np.array([100.0, np.nan] + [100.0] * 10), "finite"),
        (np.array([100.0, np.inf] + [100.0] * 10), "finite"),
        (np.array([100.0, 0.0] + [100.0] * 10), "strictly positive"),
        (np.array([100.0, -5.0] + [100.0] * 10), "strictly positive"),
        (np.ones(5), r"needs lookback \+ episode_length \+ 1 = 2 \+ 3 \+ 1 = 6 rows"),
        (np.ones((12, 2)), r"pass a single column"),
        (np.ones((12, 1, 1)), r"\(12, 1, 1\)"),
    ],
)
def test_bad_price_histories_are_refused(prices, message):
    with pytest.raises(ValueError, match=message):
        TradingEnv(prices, lookback=2, episode_length=3)


def test_a_column_vector_is_one_asset():
    env = TradingEnv(PRICES[:, None], lookback=2, episode_length=3)
    assert env.prices.shape == (8,)


def test_source_errors():
    with pytest.raises(ValueError, match="pass one source"):
        TradingEnv(PRICES, model=GBM())
    with pytest.raises(TypeError, match="data="):
        TradingEnv(MarketData(PRICES))
    with pytest.raises(TypeError, match="MarketData"):
        TradingEnv(data=PRICES)
    with pytest.raises(ValueError, match=r"data.select\(\[asset\]\)"):
        TradingEnv(data=MarketData(np.ones((20, 2))), lookback=2, episode_length=3)
    with pytest.raises(ValueError, match="Market-v0"):
        TradingEnv(data=MarketData([1.0, np.nan] + [1.0] * 10), lookback=2, episode_length=3)
    with pytest.raises(ValueError, match="one asset"):
        TradingEnv(model=GBM(n_assets=2))


def test_model_source_and_its_dt():
    env = TradingEnv(model=GBM(mu=0.1, sigma=0.3, dt=1 / 52), episode_length=10, lookback=3)
    assert env.dt == pytest.approx(1 / 52)
    result = env.reset(seed=1)
    assert result.observation.shape == (4,) and env.price_history.shape == (4,)


class HalfListed:
    """A one-asset model whose asset is unlisted at the start."""

    n_assets = 1
    dt = 1 / 252

    def simulate(self, rng, n_steps, *, n_paths=None):
        prices = np.full((n_steps + 1, 1), 100.0)
        mask = np.ones_like(prices, dtype=bool)
        mask[0] = False
        return Simulation(prices, mask)


def test_a_model_with_unlisted_assets_is_refused_at_reset():
    env = TradingEnv(model=HalfListed(), episode_length=3, lookback=2)
    with pytest.raises(ValueError, match="unlisted"):
        env.reset(seed=0)


def test_simulated_paths_are_reproducible_by_seed():
    first = TradingEnv().reset(seed=3).observation
    assert np.array_equal(TradingEnv().reset(seed=3).observation, first)
    assert not np.array_equal(TradingEnv().reset(seed=4).observation, first)


# -- samplers and the start option --------------------------------------------------------------


def first_decisions(env: TradingEnv, count: int) -> list[int]:
    return [env.reset().info["timestamp"] for _ in range(count)]


def test_sequential_sampler_tiles_the_history_and_wraps():
    env = TradingEnv(walk(300), lookback=5, episode_length=20, sampler="sequential")
    assert first_decisions(env, 15) == [*range(5, 266, 20), 5]
    assert env.sampler.epoch == 1


def test_sequential_start_with_stride_and_fixed_start():
    env = TradingEnv(walk(300), lookback=5, episode_length=20, sampler=SequentialStart(3, 50))
    assert first_decisions(env, 7) == [8, 58, 108, 158, 208, 258, 8]
    env = TradingEnv(walk(300), lookback=5, episode_length=20, sampler=7)
    assert first_decisions(env, 2) == [12, 12] and env.sampler == env.sampler
    assert repr(TradingEnv(walk(300), sampler=FixedStart(7)).sampler) == "FixedStart(7)"


def test_random_sampler_is_reproducible_and_in_range():
    env = TradingEnv(walk(300), lookback=5, episode_length=20)
    starts = [env.reset(seed=s).info["timestamp"] for s in range(30)]
    assert all(5 <= t <= 279 for t in starts) and len(set(starts)) > 10
    assert env.reset(seed=7).info["timestamp"] == env.reset(seed=7).info["timestamp"]


def test_start_option_forms():
    env = TradingEnv(walk(300), lookback=5, episode_length=20)
    assert env.reset(options={"start": 40}).info["timestamp"] == 40
    assert env.reset(options={"start": np.int32(41)}).info["timestamp"] == 41
    assert env.reset(options={"start": -21}).info["timestamp"] == 279
    assert env.reset(options={"start": Time(42)}).info["timestamp"] == 42
    assert env.reset(options={"start": None}).info["timestamp"] in range(5, 280)
    with pytest.raises(ValueError, match=r"rows 5\.\.279"):
        env.reset(options={"start": 280})
    with pytest.raises(TypeError):
        env.reset(options={"start": True})


def test_start_option_hints_at_time_for_numeric_timestamps():
    data = MarketData(walk(300), timestamps=1_700_000_000 + 60 * np.arange(300))
    env = TradingEnv(data=data, lookback=5, episode_length=20)
    with pytest.raises(ValueError, match=r"pass Time\(1700000600\)"):
        env.reset(options={"start": 1_700_000_600})
    assert env.reset(options={"start": Time(1_700_000_600)}).info["timestamp"] == 1_700_000_600


def test_start_option_does_not_advance_the_sampler():
    env = TradingEnv(walk(300), lookback=5, episode_length=20, sampler="sequential")
    env.reset(options={"start": 100})
    assert env.reset().info["timestamp"] == 5


def test_unknown_reset_options_are_refused():
    env = TradingEnv(walk(300), lookback=5, episode_length=20)
    with pytest.raises(ValueError, match=r"'strat'.*'start'"):
        env.reset(options={"strat": 10})
    env.reset(options={})


def test_start_option_needs_a_history():
    with pytest.raises(ValueError, match="needs a price history"):
        TradingEnv().reset(options={"start": 40})


def test_warmup_rows_are_never_decision_rows():
    data = MarketData(walk(300), warmup=12)
    env = TradingEnv(data=data, lookback=5, episode_length=20, sampler="sequential")
    assert env.reset().info["timestamp"] == 12
    with pytest.raises(ValueError, match="warm-up row"):
        env.reset(options={"start": 8})
    with pytest.raises(ValueError, match="no episode fits"):
        TradingEnv(data=MarketData(walk(30), warmup=29), lookback=5, episode_length=20)


# -- cost context -------------------------------------------------------------------------------


def test_spread_cost_reads_the_decision_rows_spread():
    data = MarketData(PRICES, fields={"spread": np.linspace(0.01, 0.08, 8)})
    env = TradingEnv(data=data, lookback=2, episode_length=3, transaction_cost=SpreadCost())
    env.reset(options={"start": 2})
    assert env.step(2).info["cost"] == pytest.approx(0.5 * 0.03)
