"""The native finance envs' attribute rules, samplers, frozen sub-envs and options."""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest

import sekai
from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.error import InvalidAction, ResetRequired
from sekai.finance import (
    GBM,
    DrawdownPenalty,
    FixedCost,
    LogReturn,
    ProportionalCost,
    RandomStart,
    SequentialStart,
)

HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 179)))
TRADING = {"prices": HISTORY, "episode_length": 21, "lookback": 10}


def trading(n: int = 4, **kwargs) -> TradingVecEnv:
    return TradingVecEnv(n, **{**TRADING, **kwargs})


# -- parameters on the template ----------------------------------------------------------------


def test_parameters_live_on_the_template_and_repeat_per_sub_env():
    vec = PortfolioVecEnv(3)
    assert vec.get_attr("sigma") == [vec.template.sigma] * 3
    assert all(s is vec.template.sigma for s in vec.get_attr("sigma"))  # never split
    vec.set_attr("mu", 0.1)
    assert vec.template.mu == 0.1 and vec.mu == 0.1
    vec.set_attr("mu", [0.2, 0.2, 0.2])
    assert vec.template.mu == 0.2


def test_a_list_of_different_values_is_refused():
    vec = TradingVecEnv(3)
    with pytest.raises(ValueError, match=r"one shared parameter.*vectorization_mode='sync'"):
        vec.set_attr("sigma", [0.1, 0.2, 0.3])
    assert vec.sigma == 0.2


def test_set_attr_of_one_generator_per_sub_env_says_the_native_env_has_one():
    vec = sekai.make_vec("Trading-v0", 3)
    with pytest.raises(TypeError, match=r"TradingVecEnv\.set_attr.*one Generator for all its sub"):
        vec.set_attr("rng", np.random.default_rng(0).spawn(3))
    vec.set_attr("rng", np.random.default_rng(0))
    vec.reset()


def test_set_attr_validates_through_the_template():
    vec = TradingVecEnv(2)
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        vec.set_attr("sigma", -1.0)


class _Scalar:
    """A 0-d array of another library (as a JAX or torch scalar): ``ndim`` and ``__array__``."""

    ndim = 0

    def __init__(self, value: float, convertible: bool = True) -> None:
        self.value, self.convertible = value, convertible

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        if not self.convertible:  # as a tensor on a GPU
            raise TypeError("can't convert a device tensor to numpy")
        return np.array(self.value, dtype=dtype)

    def __repr__(self) -> str:
        return f"_Scalar({self.value})"


def test_a_0d_array_of_another_library_is_the_number_it_holds():
    vec = MarketMakingVecEnv(2)
    vec.set_attr("sigma", _Scalar(2.0))  # as np.array(2.0) is
    assert vec.get_attr("sigma") == [2.0, 2.0] and type(vec.sigma) is float
    with pytest.raises(ValueError, match=r"^sigma must be a finite number >= 0, got -2\.0\.$"):
        vec.set_attr("sigma", _Scalar(-2.0))  # named by its value, not its type
    with pytest.raises(
        ValueError, match=r"^sigma must be a finite number >= 0, got _Scalar _Scalar\(2\.0\)\.$"
    ):  # one NumPy cannot read is refused, named by its type
        vec.set_attr("sigma", _Scalar(2.0, convertible=False))
    assert vec.get_attr("sigma") == [2.0, 2.0]


def test_a_0d_integral_array_is_the_count_it_holds_on_the_native_and_kernel_envs():
    from sekai.registry.kernels import load_kernel
    from sekai.vector.kernel_vec_env import KernelVecEnv

    native = sekai.make_vec("OptimalExecution-v0", 2)
    kernel = KernelVecEnv(load_kernel(sekai.spec("OptimalExecution-v0"), {}), 2)
    for vec in (native, kernel):
        vec.set_attr("n_steps", np.array(50))
        assert vec.get_attr("n_steps") == [50, 50]
        # named as given by both: the kernel's params pass the env the array, not its item
        with pytest.raises(
            ValueError, match=r"^n_steps must be an int >= 1, got ndarray array\(50\.\)\.$"
        ):
            vec.set_attr("n_steps", np.array(50.0))


@pytest.mark.parametrize(
    ("cls", "name", "reason"),
    [
        (TradingVecEnv, "lookback", "it fixes the shapes of the env's arrays; build a new env"),
        (TradingVecEnv, "episode_length", "fixes the shapes"),
        (TradingVecEnv, "positions", "fixes the shapes"),
        (TradingVecEnv, "prices", "loaded when the env is built"),
        (TradingVecEnv, "data", "loaded when the env is built"),
        (TradingVecEnv, "transaction_cost", "set `cost_model` instead"),
        (TradingVecEnv, "metadata", "describes the env class"),
        (PortfolioVecEnv, "n_assets", "fixes the shapes"),
        (PortfolioVecEnv, "allow_short", "fixes the shapes"),
        (PortfolioVecEnv, "lookback", "fixes the shapes"),
        (PortfolioVecEnv, "transaction_cost", "became `cost_model`"),
    ],
)
def test_read_only_parameters(cls, name, reason):
    vec = cls(2)
    with pytest.raises(AttributeError, match=rf"{cls.__name__}\.{name} is read-only: .*{reason}"):
        vec.set_attr(name, getattr(vec, name))
    with pytest.raises(AttributeError, match="read-only"):
        setattr(vec, name, getattr(vec, name))


def test_metadata_describes_the_single_env():
    assert TradingVecEnv.metadata == {"render_fps": 10} == TradingVecEnv(1).metadata


def test_state_is_per_sub_env_and_cannot_be_set():
    vec = trading()
    vec.reset(options=[{"start": t} for t in (10, 31, 52, 73)])
    vec.step(np.array([2, 2, 1, 0]))
    assert vec.get_attr("timestamp") == [11, 32, 53, 74]
    positions = vec.get_attr("position")
    assert positions[:3] == [1.0, 1.0, 0.0] and -1.1 < positions[3] < -0.9  # a short drifts
    assert vec.get_attr("elapsed_steps") == [1, 1, 1, 1]
    assert [type(e) for e in vec.get_attr("equity")] == [float] * 4
    assert vec.get_attr("price") == HISTORY[[11, 32, 53, 74]].tolist()
    histories = vec.get_attr("price_history")
    assert [h.shape for h in histories] == [(12,)] * 4
    assert np.array_equal(histories[2], HISTORY[42:54])
    with pytest.raises(AttributeError, match="per-sub-env state"):
        vec.set_attr("equity", 2.0)


def test_state_properties_give_copies_keep_their_doc_and_cannot_be_assigned():
    vec = MarketMakingVecEnv(2)
    vec.reset(seed=0)
    mid = vec.mid
    mid[:] = -1.0
    assert vec.mid.tolist() == [100.0, 100.0]
    vec.step(np.ones((2, 2), np.float32))
    assert mid.tolist() == [-1.0, -1.0]
    assert MarketMakingVecEnv.mid.__doc__ == "Mid price of every sub-env."
    with pytest.raises(AttributeError):
        vec.mid = np.zeros(2)


def test_an_autoreset_restarts_only_the_finished_session_clock():
    vec = OptimalExecutionVecEnv(3)
    vec.reset(seed=0)
    vec.step(np.full((3, 1), 0.1, np.float32))
    result = vec.step(np.array([[0.1], [1.0], [0.1]], np.float32))  # sub-env 1 sells out
    assert result.terminated.tolist() == [False, True, False]
    assert vec.get_attr("elapsed_steps") == [2, 0, 2]
    assert result.observations[1].tolist() == [1.0, 1.0, 0.0]
    assert result.observations[0, 1] == np.float32(23 / 25)


def test_unknown_attribute_is_refused():
    with pytest.raises(AttributeError):
        TradingVecEnv(2).set_attr("nonexistent", 1)


def test_reward_fn_is_copied_and_shared():
    vec = PortfolioVecEnv(2)
    reward = LogReturn() - DrawdownPenalty()
    vec.set_attr("reward_fn", reward)
    assert vec.reward_fn is not reward and vec.get_attr("reward_fn")[0] is vec.template.reward_fn


def test_cost_model_change_takes_effect_at_the_next_step():
    vec = trading(2)
    vec.reset(options={"start": 20})
    vec.set_attr("cost_model", ProportionalCost(0.01))
    assert vec.step(np.array([2, 2])).infos[0]["cost"] == pytest.approx(0.01)


def test_sigma_zero_stops_the_simulated_noise():
    vec = TradingVecEnv(3, mu=0.0, transaction_cost=0.0)
    vec.set_attr("sigma", 0.0)
    vec.reset(seed=0)
    result = vec.step(np.full(3, 2))
    assert result.rewards == pytest.approx(np.zeros(3), abs=1e-15)


def test_model_source_is_simulated_at_reset():
    vec = PortfolioVecEnv(3, model=GBM(mu=0.05, sigma=0.2, n_assets=2), episode_length=5)
    vec.reset(seed=0)
    result = vec.step(np.ones((3, 3)))
    assert result.observations["returns"].shape == (3, 30, 2)
    assert np.isfinite(result.rewards).all()
    assert vec.price_history[0].shape == (32, 2)


@pytest.mark.parametrize("make", [TradingVecEnv, PortfolioVecEnv], ids=["trading", "portfolio"])
def test_model_paths_are_observed_as_their_log_returns(make):
    n = 1 if make is TradingVecEnv else 2
    vec = make(3, model=GBM(mu=0.05, sigma=0.3, n_assets=n), episode_length=4, lookback=5)

    def windows(result):
        obs = result.observations
        return (obs["returns"] if isinstance(obs, dict) else obs[:, :5, None]).astype(np.float64)

    def expected(k):
        history = vec.price_history[k].reshape(len(vec.price_history[k]), n)
        return np.log(history[-5:] / history[-6:-1])

    result = vec.reset(seed=4)
    for _ in range(3):
        for k in range(3):
            assert np.allclose(windows(result)[k], expected(k), rtol=1e-5, atol=1e-7)
        action = np.full(3, 2) if n == 1 else np.ones((3, n + 1))
        result = vec.step(action)


# -- samplers ------------------------------------------------------------------------------------


def test_each_sub_env_gets_a_spawned_sampler():
    sampler = SequentialStart(start=21, stride=21)
    vec = TradingVecEnv(3, sampler=sampler, **TRADING)
    lanes = vec.get_attr("sampler")
    assert len({id(lane) for lane in lanes}) == 3 and sampler not in lanes
    first = vec.reset(seed=0)
    assert [info["timestamp"] for info in first.infos] == [31, 31, 31]
    # The instance passed in was not advanced: a single env using it starts at its first window.
    single = sekai.make("Trading-v0", sampler=sampler, **TRADING)
    assert single.reset(seed=0).info["timestamp"] == 31
    assert single.reset().info["timestamp"] == 52


def test_shared_samplers_stay_shared():
    class Counting(sekai.finance.EpisodeSampler):
        calls = 0

        def sample(self, rng, n_starts, episode_length):
            Counting.calls += 1
            return 0

    sampler = Counting()
    vec = TradingVecEnv(3, sampler=sampler, **TRADING)
    assert all(lane is sampler for lane in vec.get_attr("sampler"))
    vec.reset(seed=0)
    assert Counting.calls == 3


def test_set_attr_sampler_per_sub_env():
    vec = trading(2)
    vec.set_attr("sampler", [SequentialStart(0), SequentialStart(21)])
    assert [i["timestamp"] for i in vec.reset(seed=0).infos] == [10, 31]
    vec.set_attr("sampler", 5)
    assert [i["timestamp"] for i in vec.reset(seed=0).infos] == [15, 15]


# -- options, frozen sub-envs, time limit ----------------------------------------------------------


def test_options_one_dict_for_all_or_one_per_sub_env():
    vec = trading()
    assert [i["timestamp"] for i in vec.reset(options={"start": 40}).infos] == [40] * 4
    infos = vec.reset(options=[{"start": 12}, None, {}, {"start": None}]).infos
    assert infos[0]["timestamp"] == 12 and all(10 <= i["timestamp"] <= 157 for i in infos)


def test_unknown_and_invalid_options_are_refused():
    vec = trading()
    with pytest.raises(ValueError, match="'strat'"):
        vec.reset(options={"strat": 10})
    with pytest.raises(ValueError, match=r"rows 10\.\.157"):
        vec.reset(options=[{"start": 5}, None, None, None])
    with pytest.raises(ValueError, match="needs a price history"):
        TradingVecEnv(2).reset(options={"start": 40})


@pytest.mark.parametrize("mode", [None, "sync", "async"])
@pytest.mark.parametrize(
    ("entry", "message"),
    [({"start": 1000}, r"options\['start'\] = row 1000"), ({"strat": 11}, "'strat'")],
)
def test_a_bad_option_in_a_list_names_its_sub_env(mode, entry, message):
    vec = sekai.make_vec("Trading-v0", 3, vectorization_mode=mode, **TRADING)
    with pytest.raises(ValueError, match=message) as raised:
        vec.reset(seed=0, options=[{"start": 10}, {"start": 11}, entry])
    assert raised.value.__notes__ == ["raised by sub-env 2, reset with reset(options=...)[2]"]
    with pytest.raises(ValueError, match=message) as raised:  # one dict for all: no entry
        vec.reset(seed=0, options=entry)
    assert not hasattr(raised.value, "__notes__")
    vec.close()


def test_frozen_sub_envs_keep_their_state():
    vec = TradingVecEnv(3, autoreset=False, **TRADING)
    vec.reset(options=[{"start": t} for t in (10, 20, 30)])
    for _ in range(21):
        last = vec.step(np.array([2, 0, 1]))
    assert last.dones.all()
    state = {k: vec.get_attr(k) for k in ("equity", "position", "price", "timestamp")}
    histories = vec.get_attr("price_history")
    later = vec.step(np.array([0, 2, 2]))
    assert later.rewards.tolist() == [0.0, 0.0, 0.0] and later.infos == [{}, {}, {}]
    assert np.array_equal(later.observations, last.observations)
    assert {k: vec.get_attr(k) for k in state} == state
    assert all(np.array_equal(a, b) for a, b in zip(vec.get_attr("price_history"), histories))
    assert vec.get_attr("elapsed_steps") == [21, 21, 21]


def test_frozen_simulated_sub_envs_keep_their_state():
    vec = TradingVecEnv(2, autoreset=False, episode_length=3, lookback=2)
    vec.reset(seed=0)
    for _ in range(3):
        vec.step(np.array([2, 2]))
    prices, histories = vec.get_attr("price"), vec.get_attr("price_history")
    for _ in range(3):
        vec.step(np.array([0, 0]))
    assert vec.get_attr("price") == prices
    assert all(np.array_equal(a, b) for a, b in zip(vec.get_attr("price_history"), histories))


def test_frozen_market_making_sub_envs_keep_their_state_and_last_quotes():
    vec = MarketMakingVecEnv(2, autoreset=False, n_steps=2)
    vec.reset(seed=0)
    for _ in range(2):
        last = vec.step(np.full((2, 2), 1.0, np.float32))
    assert last.dones.all()
    state = {name: vec.get_attr(name) for name in vec.state_names}
    later = vec.step(np.full((2, 2), 4.0, np.float32))  # other quotes, ignored while frozen
    assert later.rewards.tolist() == [0.0, 0.0]
    assert {name: vec.get_attr(name) for name in vec.state_names} == state
    assert state["bid"] == [info["bid"] for info in last.infos]
    assert state["ask"] == [info["ask"] for info in last.infos]


def test_max_episode_steps_truncates_every_sub_env():
    vec = sekai.make_vec("Trading-v0", 8, max_episode_steps=50)
    vec.reset(seed=0)
    for _ in range(49):
        assert not vec.step(np.ones(8, int)).truncated.any()
    result = vec.step(np.ones(8, int))
    assert result.truncated.all()
    assert result.infos[0]["final_info"]["elapsed_steps"] == 50


def test_autoreset_gives_final_and_reset_infos():
    vec = trading(2, sampler="sequential")
    vec.reset(seed=0)
    for _ in range(21):
        result = vec.step(np.ones(2, int))
    info = result.infos[0]
    assert info["final_info"]["timestamp"] == 31 and info["reset_info"]["timestamp"] == 31
    assert info["reset_info"]["equity"] == 1.0 and result.observations.shape == (2, 11)


def test_invalid_actions_are_refused_before_stepping():
    vec = trading(2)
    vec.reset(seed=0)
    with pytest.raises(InvalidAction):
        vec.step(np.array([0, 3]))
    with pytest.raises(ValueError):
        vec.step(np.array([0, 1, 2]))
    vec.step(np.array([0.0, 2.0]))  # float arrays of integral values are accepted
    portfolio = PortfolioVecEnv(2)
    portfolio.reset(seed=0)
    with pytest.raises(InvalidAction):
        portfolio.step(np.array([[1, 1, 1, 1, 1, np.nan], [1, 1, 1, 1, 1, 1]]))


@pytest.mark.parametrize(
    "cls", [TradingVecEnv, PortfolioVecEnv, MarketMakingVecEnv, OptimalExecutionVecEnv]
)
def test_writing_into_results_never_changes_the_simulation(cls):
    """Observations and info arrays are the caller's: scribbling on them changes nothing."""

    def run(scribble: bool) -> list[np.ndarray]:
        vec = cls(3)
        vec.reset(seed=0)
        vec.batch_action_space.seed(1)
        actions = [vec.batch_action_space.sample() for _ in range(4)]
        rewards = []
        for action in actions:
            result = vec.step(action)
            rewards.append(result.rewards)
            if scribble:
                obs = result.observations
                for array in obs.values() if isinstance(obs, dict) else [obs]:
                    array[...] = 0.25
                for info in result.infos:
                    for value in info.values():
                        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                            value[...] = 0.5
        return rewards

    assert np.array_equal(run(scribble=True), run(scribble=False))


def test_step_before_reset():
    with pytest.raises(ResetRequired):
        TradingVecEnv(2).step(np.zeros(2, int))


def test_action_to_weights_is_batched():
    vec = PortfolioVecEnv(3, n_assets=2)
    weights = vec.action_to_weights(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1, 0, 1]]))
    assert weights.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0], [0.5, 0.0, 0.5]]
    assert next(w.tolist() for w in vec.call("action_to_weights", np.ones((3, 3)))) == [1 / 3] * 3


def test_make_vec_chooses_the_native_envs():
    assert repr(sekai.make_vec("Portfolio-v0", num_envs=64)) == "PortfolioVecEnv(num_envs=64)"
    assert repr(sekai.make_vec("Trading-v0", 2)) == "TradingVecEnv(num_envs=2)"
    sync = sekai.make_vec("Portfolio-v0", num_envs=64, vectorization_mode="sync")
    assert repr(sync) == "SyncVecEnv(num_envs=64)"


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"render_mode": "rgb_array"}, "Portfolio-v0 takes no render_mode='rgb_array'"),
        ({"foo": 1}, "Portfolio-v0: its entry point 'sekai.envs.finance.portfolio:PortfolioEnv'"),
    ],
)
def test_make_vec_native_refuses_env_kwargs_as_the_sync_mode_does(kwargs, says):
    messages = []
    for mode in (None, "sync"):
        with pytest.raises(TypeError, match=says) as caught:
            sekai.make_vec("Portfolio-v0", 2, vectorization_mode=mode, **kwargs)
        messages.append(str(caught.value).replace("sekai.make()", "sekai.make_vec()"))
    assert messages[0] == messages[1]


def test_make_vec_native_names_a_proc_option_given_without_the_proc_mode():
    with pytest.raises(TypeError) as caught:
        sekai.make_vec("Portfolio-v0", 2, vector_kwargs={"num_workers": 2})
    message = str(caught.value)
    assert message.startswith(
        "Portfolio-v0: its vector_entry_point 'sekai.envs.finance.vector.portfolio:PortfolioVecEnv'"
        " does not take the keyword argument 'num_workers'"
    )
    assert message.endswith("of ProcVecEnv: pass it with vectorization_mode='proc'.")


@pytest.mark.parametrize("mode", [None, "sync"])
def test_gbm_changes_reach_infos_at_once_and_the_simulation_at_the_next_reset(mode):
    vec = sekai.make_vec(
        "Trading-v0", 4, vectorization_mode=mode, mu=0.0, sigma=0.0, transaction_cost=0.0
    )
    vec.reset(seed=0)
    vec.set_attr("dt", 1 / 52)
    vec.set_attr("mu", 0.52)
    result = vec.step(np.full(4, 2))
    assert result.infos[0]["dt"] == 1 / 52 and vec.get_attr("dt") == [1 / 52] * 4
    assert result.rewards == pytest.approx(np.zeros(4), abs=1e-15)  # this episode's path
    vec.reset(seed=0)
    assert vec.step(np.full(4, 2)).rewards == pytest.approx(np.full(4, 0.01))


def test_each_native_sub_env_simulates_with_the_parameters_of_its_own_reset():
    # a ticket fee of the whole capital: the first trade costs the account (cost 1)
    ruin = FixedCost(1_000_000.0)
    vec = TradingVecEnv(2, mu=0.0, sigma=0.0, transaction_cost=ruin, episode_length=5)
    vec.reset(seed=0)
    vec.set_attr("mu", 2.52)
    first = vec.step(np.array([2, 1]))  # sub-env 0 pays all it has: it ends and restarts
    assert first.terminated.tolist() == [True, False]
    vec.set_attr("cost_model", ProportionalCost(0.0))
    for _ in range(4):  # sub-env 1's episode keeps its drift of 0 until it ends
        assert vec.step(np.full(2, 2)).rewards == pytest.approx([0.01, 0.0], abs=1e-15)
    assert vec.step(np.full(2, 2)).rewards == pytest.approx([0.01, 0.01])
    portfolio = PortfolioVecEnv(3, sigma=0.0, mu=0.0, transaction_cost=0.0, episode_length=4)
    portfolio.reset(seed=0)
    for _ in range(2):
        portfolio.step(np.ones((3, 6)))
    portfolio.set_attr("mu", 2.52)
    portfolio.set_attr("corr", np.eye(5))
    hold = np.tile([1.0, 0, 0, 0, 0, 0], (3, 1))
    for _ in range(2):  # the episodes end at the second step and autoreset with the new terms
        assert portfolio.step(hold).rewards == pytest.approx(np.zeros(3), abs=1e-15)
    assert portfolio.step(hold).rewards == pytest.approx(np.full(3, 0.01))


def test_record_performance_on_a_finance_env_annualises_with_its_dt():
    env = sekai.finance.RecordPerformance(sekai.make("Trading-v0", episode_length=10))
    env.reset(seed=0)
    for _ in range(10):
        result = env.step(2)
    summary = result.info["performance"]
    assert summary.n_periods == 10 and env.last_returns.shape == (10,)
    assert env.last_periods_per_year == 252.0  # 1 / dt of Trading-v0's default dt
    growth = float(np.prod(1 + env.last_returns))
    assert summary.annualized_return == pytest.approx(growth ** (252 / 10) - 1)
    weekly = sekai.finance.RecordPerformance(sekai.make("Trading-v0", episode_length=10, dt=1 / 52))
    weekly.reset(seed=0)
    for _ in range(10):
        last = weekly.step(2)
    growth = float(np.prod(1 + weekly.last_returns))
    assert weekly.last_periods_per_year == 52.0
    assert last.info["performance"].annualized_return == pytest.approx(growth ** (52 / 10) - 1)
    assert summary.total_return == pytest.approx(result.info["equity"] - 1)
    assert summary.mean_turnover == pytest.approx(0.1) and summary.total_cost == pytest.approx(
        0.001
    )


# -- rules found in review: episode state before reset, equal values, read-only lists --------------


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (TradingVecEnv, "price"),
        (TradingVecEnv, "timestamp"),
        (TradingVecEnv, "price_history"),
        (PortfolioVecEnv, "price"),
        (PortfolioVecEnv, "price_history"),
        (MarketMakingVecEnv, "timestamp"),
        (OptimalExecutionVecEnv, "timestamp"),
    ],
)
def test_episode_state_before_the_first_reset_raises_reset_required(cls, name):
    vec = cls(2)
    with pytest.raises(ResetRequired, match=rf"{cls.__name__}\.{name} describes the current"):
        vec.get_attr(name)
    vec.reset(seed=0)
    assert len(vec.get_attr(name)) == 2


def test_set_attr_takes_a_list_of_equal_numbers_of_any_numeric_type():
    vec = sekai.make_vec("MarketMaking-v0", 3)
    vec.set_attr("sigma", [2, 2.0, np.float64(2.0)])
    assert vec.get_attr("sigma") == [2.0] * 3
    with pytest.raises(ValueError, match="one shared parameter"):
        vec.set_attr("sigma", [2, 2.0, 3])


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("positions", [(0, 1), (-1, 0, 1)]),
        ("prices", [np.ones(3), np.ones(4)]),
        ("metadata", [{}, {}]),
    ],
)
def test_read_only_parameters_refuse_any_list_with_their_reason(name, values):
    with pytest.raises(AttributeError, match=rf"TradingVecEnv\.{name} is read-only"):
        TradingVecEnv(2).set_attr(name, values)


@pytest.mark.parametrize("env_id", ["MarketMaking-v0", "OptimalExecution-v0"])
def test_session_natives_have_no_sampler_like_their_single_envs(env_id):
    native = sekai.make_vec(env_id, 2)
    sync = sekai.make_vec(env_id, 2, vectorization_mode="sync")
    for vec in (native, sync):
        with pytest.raises(AttributeError, match="sampler"):
            vec.get_attr("sampler")


@pytest.mark.parametrize("env_id", ["MarketMaking-v0", "OptimalExecution-v0"])
def test_session_envs_say_they_accept_no_reset_options(env_id):
    for env in (sekai.make(env_id), sekai.make_vec(env_id, 2)):
        with pytest.raises(ValueError, match=r"'strat'; this env accepts: none\."):
            env.reset(options={"strat": 1})
        with pytest.raises(ValueError, match="no price history"):
            env.reset(options={"start": 10})
        env.reset(options={"start": None})


def test_native_action_to_weights_checks_the_batch():
    vec = PortfolioVecEnv(2)
    with pytest.raises(InvalidAction, match="sub-env 0"):
        vec.action_to_weights(np.full((2, 6), np.nan))
    with pytest.raises(ValueError, match=r"shape \(2, 6\)"):
        vec.action_to_weights(np.ones((2, 3)))


def _window_timestamps(vec, resets: int = 3) -> list[list]:
    return [[info["timestamp"] for info in vec.reset().infos] for _ in range(resets)]


@pytest.mark.parametrize("mode", [None, "sync", "async", "proc"])
def test_set_attr_of_one_sampler_object_spawns_it_per_sub_env_as_make_vec_does(mode):
    # As make_vec(sampler=...) on every backend: each sub-env gets the object's spawn(), so a
    # SequentialStart replays the same windows everywhere and the caller's object stays put.
    built = sekai.make_vec("Trading-v0", 3, vectorization_mode=mode, sampler=0, **TRADING)
    given = sekai.make_vec(
        "Trading-v0", 3, vectorization_mode=mode, sampler=SequentialStart(), **TRADING
    )
    with built, given:
        sampler = SequentialStart()
        built.set_attr("sampler", sampler)
        lanes = built.get_attr("sampler")
        assert len({id(lane) for lane in lanes}) == 3 and sampler not in lanes
        assert _window_timestamps(built) == _window_timestamps(given)
        assert _window_timestamps(built, 1) == [[73, 73, 73]]
        assert (sampler.epoch, sampler._next) == (0, 0)


def test_set_attr_of_a_shared_sampler_object_keeps_it_shared():
    native = trading(3, sampler=0)
    sync = sekai.make_vec("Trading-v0", 3, vectorization_mode="sync", sampler=0, **TRADING)
    for vec in (native, sync):
        sampler = RandomStart()  # spawn() returns the sampler itself
        vec.set_attr("sampler", sampler)
        assert all(lane is sampler for lane in vec.get_attr("sampler"))


class _InTurn(sekai.finance.EpisodeSampler):
    """A shared curriculum (the default ``spawn()``): windows 0, 1, 2, ... to whoever asks."""

    def __init__(self) -> None:
        self.next = 0

    def sample(self, rng, n_starts, episode_length):
        self.next += 1
        return (self.next - 1) % n_starts


class _InTurnPerSubEnv(_InTurn):
    def spawn(self):
        return copy.deepcopy(self)


def _first_windows(sampler: type, mode: str | None, **vector_kwargs) -> list:
    with sekai.make_vec(
        "Trading-v0", 4, vectorization_mode=mode, vector_kwargs=vector_kwargs, sampler=sampler(),
        **TRADING,
    ) as vec:  # fmt: skip
        return [info["timestamp"] for info in vec.reset(seed=0).infos]


@pytest.fixture
def samplers_pickled_by_value():
    # Workers rebuild the samplers from their code: this test module is not importable there
    # (pytest imports it by path).
    import cloudpickle

    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    yield
    cloudpickle.unregister_pickle_by_value(module)


def test_a_shared_sampler_is_shared_within_each_proc_worker_and_a_spawning_one_everywhere(
    samplers_pickled_by_value,
):
    # As the vector page says: one instance for every sub-env in one process (sync, async,
    # native, a single worker), one copy per worker process under ProcVecEnv.
    for mode, workers in [(None, {}), ("sync", {}), ("async", {}), ("proc", {"num_workers": 1})]:
        assert _first_windows(_InTurn, mode, **workers) == [10, 11, 12, 13], mode
    assert _first_windows(_InTurn, "proc", num_workers=2) == [10, 11, 10, 11]
    assert _first_windows(_InTurn, "proc") == [10, 10, 10, 10]  # one worker per sub-env
    # A sampler that spawns a copy per sub-env gives the same windows on every backend.
    for mode, workers in [(None, {}), ("sync", {}), ("proc", {"num_workers": 2})]:
        assert _first_windows(_InTurnPerSubEnv, mode, **workers) == [10, 10, 10, 10], mode


def test_set_attr_of_a_sampler_name_gives_each_sub_env_its_own():
    native = trading(3, sampler=0)
    sync = sekai.make_vec("Trading-v0", 3, vectorization_mode="sync", sampler=0, **TRADING)
    for vec in (native, sync):
        vec.set_attr("sampler", "sequential")
        lanes = vec.get_attr("sampler")
        assert len({id(lane) for lane in lanes}) == 3
        assert _window_timestamps(vec, 2) == [[10, 10, 10], [31, 31, 31]]


class _Constant(sekai.finance.RewardFunction):
    def __init__(self, value) -> None:
        self.value = value

    def __call__(self, outcome):
        return self.value


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_a_reward_function_returning_one_number_rewards_every_sub_env(env_id):
    for mode in ("vector_entry_point", "sync"):
        vec = sekai.make_vec(env_id, 3, vectorization_mode=mode, reward=_Constant(0.5))
        vec.reset(seed=0)
        vec.batch_action_space.seed(0)
        rewards = vec.step(vec.batch_action_space.sample()).rewards
        assert rewards.shape == (3,) and rewards.dtype == np.float64
        assert rewards.tolist() == [0.5] * 3


def test_a_reward_function_returning_the_wrong_shape_is_named():
    vec = TradingVecEnv(3, reward=_Constant(np.zeros(2)))
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"returned rewards of shape \(2,\) for a batch of \(3,\)"):
        vec.step(np.ones(3, np.int64))


@pytest.mark.parametrize(
    ("env_id", "names"),
    [
        ("MarketMaking-v0", ["mid", "inventory", "cash", "bid", "ask", "bid_filled", "ask_filled"]),
        ("OptimalExecution-v0", ["inventory", "mid", "shortfall"]),
    ],
)
def test_session_state_is_read_only_on_the_single_env_and_every_backend(env_id, names):
    env = sekai.make(env_id)
    env.reset(seed=0)
    for mode in ("vector_entry_point", "sync"):
        vec = sekai.make_vec(env_id, 2, vectorization_mode=mode)
        vec.reset(seed=0)
        for name in names:
            before = vec.get_attr(name)
            with pytest.raises(AttributeError):
                vec.set_attr(name, 3)
            assert np.array_equal(vec.get_attr(name), before, equal_nan=True)
    for name in names:
        with pytest.raises(AttributeError):
            setattr(env.unwrapped, name, 3)


# -- a sub-env that fails to reset (core.md §14 rule 9) -------------------------------------------


def _both_backends(env_id: str, n: int, **kwargs):
    yield sekai.make_vec(env_id, n, vectorization_mode="vector_entry_point", **kwargs)
    yield sekai.make_vec(env_id, n, vectorization_mode="sync", **kwargs)


def test_a_bad_start_for_one_sub_env_still_resets_the_others_on_every_backend():
    states = []
    for vec in _both_backends("Trading-v0", 3, sampler="sequential", **TRADING):
        vec.reset(seed=0)
        for _ in range(3):
            vec.step(np.array([2, 2, 2]))
        # sub-envs 1 and 2 are invalid (rows below lookback); the first one's error is raised
        with pytest.raises(ValueError, match=r"options\['start'\].*\b2\b"):
            vec.reset(options=[{"start": 40}, {"start": 2}, {"start": 3}])
        with pytest.raises(ResetRequired):
            vec.step(np.array([1, 1, 1]))
        states.append(
            (vec.get_attr("elapsed_steps"), vec.get_attr("timestamp"), vec.get_attr("equity"))
        )
        assert [i["timestamp"] for i in vec.reset(options={"start": 50}).infos] == [50] * 3
    assert states[0] == states[1]
    assert states[0][:2] == ([0, 3, 3], [40, 13, 13])


def test_an_unknown_option_for_one_session_still_restarts_the_others_on_every_backend():
    states = []
    for vec in _both_backends("OptimalExecution-v0", 2):
        vec.reset(seed=0)
        vec.step(np.full((2, 1), 0.5, np.float32))
        with pytest.raises(ValueError, match="unknown reset option"):
            vec.reset(options=[None, {"speed": 2}])
        states.append((vec.get_attr("elapsed_steps"), vec.get_attr("inventory")))
    assert states[0][0] == states[1][0] == [0, 1]
    assert states[0][1][0] == states[1][1][0] == 1e6  # restarted: nothing sold yet


def test_state_of_a_sub_env_that_never_began_an_episode_needs_a_reset_on_every_backend():
    for vec in _both_backends("Trading-v0", 2, **TRADING):
        with pytest.raises(ValueError):
            vec.reset(options=[{"start": 40}, {"start": 10_000}])
        with pytest.raises(ResetRequired):
            vec.get_attr("timestamp")


@pytest.mark.parametrize("mode", ["sync", "native"])
def test_an_action_space_set_on_the_sub_envs_leaves_the_actions_checked_as_built(mode):
    vec = sekai.make_vec("Trading-v0", 2, vectorization_mode=mode, **TRADING)
    vec.reset(seed=0)
    vec.set_attr("action_space", sekai.Discrete(5))
    assert vec.get_attr("action_space") == [sekai.Discrete(5)] * 2
    assert vec.action_space == sekai.Discrete(3)
    with pytest.raises(InvalidAction, match=r"^Action 4 is not valid for space Discrete\(3\) "):
        vec.step(np.array([4, 4]))
    vec.step(np.array([2, 0]))


def test_a_single_env_names_the_space_it_checks_after_action_space_was_replaced():
    env = sekai.make("Trading-v0", **TRADING)
    env.reset(seed=0)
    env.set_attr("action_space", sekai.Discrete(5))
    with pytest.raises(InvalidAction, match=r"^Action 4 is not valid for space Discrete\(3\)\.$"):
        env.step(4)
