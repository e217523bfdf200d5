"""Tests for MarketMakingVecEnv: parity with the single env, attribute rules, frozen sub-envs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
from sekai.finance.baselines.market_making import evaluate_quotes

# Fills are certain at 0.2 from the mid and impossible at 2.0 or more; the mid does not move.
DETERMINISTIC = {"sigma": 0.0, "fill_intensity": 1e9, "fill_decay": 50.0, "n_steps": 12}


def _actions(step: int, n: int) -> np.ndarray:
    pattern = [(0.2, 3.0), (3.0, 0.2), (0.2, 0.2), (2.5, 4.0), (0.2, 3.0)]
    return np.array([pattern[(step + i) % 5] for i in range(n)], np.float32)


def _native_and_sync(**params: Any) -> tuple[Any, Any]:
    """Four MarketMaking-v0 sub-envs without autoreset, native and in a SyncVecEnv."""
    native = MarketMakingVecEnv(4, autoreset=False, **params)
    sync = sekai.make_vec(
        "MarketMaking-v0",
        4,
        vectorization_mode="sync",
        vector_kwargs={"autoreset": False},
        **params,
    )
    return native, sync


def test_make_vec_builds_the_native_env() -> None:
    vec = sekai.make_vec("MarketMaking-v0", 8)
    assert repr(vec) == "MarketMakingVecEnv(num_envs=8)"
    assert vec.observation_space == MarketMakingEnv().observation_space
    assert vec.action_space == MarketMakingEnv().action_space
    assert repr(sekai.make_vec("MarketMaking-v0", 8, vectorization_mode="sync")) == (
        "SyncVecEnv(num_envs=8)"
    )
    assert vec.metadata == {"render_fps": 20}


def test_native_reproduces_sync_exactly_in_a_deterministic_market() -> None:
    native, sync = _native_and_sync(**DETERMINISTIC)
    a, b = native.reset(seed=1), sync.reset(seed=1)
    np.testing.assert_array_equal(a.observations, b.observations)
    assert a.infos[0].keys() == b.infos[0].keys()
    for step in range(12):
        actions = _actions(step, 4)
        a, b = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.terminated, b.terminated)
        for x, y in zip(a.infos, b.infos):
            assert list(x) == list(y)
            for key in x:
                assert type(x[key]) is type(y[key]), key
                np.testing.assert_equal(x[key], y[key])
    assert a.dones.all()
    assert native.get_attr("inventory") == sync.get_attr("inventory")
    assert native.get_attr("cash") == pytest.approx(sync.get_attr("cash"))


def test_native_charges_the_same_penalties_as_sync_with_a_moving_mid() -> None:
    # Fills stay certain or impossible, so inventories match step for step; the mids move on
    # draws that differ between the two, so the penalty is compared as what the reward holds
    # beyond the wealth change.
    params = {**DETERMINISTIC, "sigma": 2.0, "risk_aversion": 0.5, "terminal_penalty": 0.25}
    native, sync = _native_and_sync(**params)
    a, b = native.reset(seed=1), sync.reset(seed=1)
    charged = 0.0
    for step in range(12):
        actions = _actions(step, 4)
        before = a.infos, b.infos
        a, b = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.terminated, b.terminated)
        penalties = []
        for result, previous in zip((a, b), before):
            gains = [now["wealth"] - then["wealth"] for now, then in zip(result.infos, previous)]
            penalties.append(np.array(gains) - result.rewards)
        np.testing.assert_allclose(penalties[0], penalties[1], rtol=0.0, atol=1e-9)
        charged += float(penalties[0].sum())
    assert a.dones.all()
    assert native.get_attr("inventory") == sync.get_attr("inventory")
    assert native.get_attr("mid") != sync.get_attr("mid")  # the mids did move, on other draws
    assert charged > 1.0


def test_native_and_sync_agree_in_distribution_with_the_exact_value() -> None:
    params = {"n_steps": 20, "total_time": 0.1}
    exact = evaluate_quotes(MarketMakingEnv(**params), lambda t, q: np.full((q.size, 2), 0.7))
    for mode, n, rounds in (("native", 2000, 2), ("sync", 200, 1)):
        vec = sekai.make_vec(
            "MarketMaking-v0",
            n,
            vectorization_mode=mode,
            vector_kwargs={"autoreset": False},
            **params,
        )
        returns = []
        for r in range(rounds):
            vec.reset(seed=10 + r)
            total = np.zeros(n)
            for _ in range(20):
                total += vec.step(np.full((n, 2), 0.7, np.float32)).rewards
            returns.append(total)
        values = np.concatenate(returns)
        se = values.std() / np.sqrt(values.size)
        assert abs(values.mean() - exact) < 4 * se, mode


def test_parameters_are_shared_and_forwarded_to_the_template() -> None:
    vec = MarketMakingVecEnv(3)
    assert vec.get_attr("sigma") == [2.0, 2.0, 2.0]
    vec.set_attr("sigma", 0.0)
    assert vec.template.sigma == 0.0 and vec.sigma == 0.0
    vec.reset(seed=0)
    for _ in range(5):
        result = vec.step(np.ones((3, 2), np.float32))
    assert [info["mid_price"] for info in result.infos] == [100.0] * 3
    vec.set_attr("n_steps", [50, 50, 50])
    assert vec.get_attr("dt") == [0.02] * 3
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        vec.set_attr("A", [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="A must be a finite number > 0"):
        vec.set_attr("A", -1.0)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("max_offset", "bounds of the action space"), ("dt", "derived"), ("metadata", "describes")],
)
def test_read_only_parameters_say_why(name: str, reason: str) -> None:
    vec = MarketMakingVecEnv(2)
    with pytest.raises(AttributeError, match=f"MarketMakingVecEnv.{name} is read-only: .*{reason}"):
        vec.set_attr(name, 1.0)


def test_state_has_one_value_per_sub_env_and_cannot_be_set() -> None:
    vec = MarketMakingVecEnv(3)
    vec.reset(seed=0)
    vec.step(np.zeros((3, 2), np.float32))
    for name in ("mid", "inventory", "cash", "wealth", "time_remaining", "elapsed_steps", "bid"):
        values = vec.get_attr(name)
        assert len(values) == 3 and all(type(v) in (float, int, bool) for v in values), name
    assert vec.get_attr("elapsed_steps") == [1, 1, 1]
    assert vec.get_attr("time_remaining") == pytest.approx([0.995] * 3)
    with pytest.raises(AttributeError, match="per-sub-env state"):
        vec.set_attr("inventory", 3)
    with pytest.raises(AttributeError):
        vec.set_attr("no_such_parameter", 3)


def test_frozen_sub_envs_keep_their_final_state() -> None:
    vec = MarketMakingVecEnv(2, autoreset=False, n_steps=3)
    vec.reset(seed=0)
    for _ in range(3):
        result = vec.step(np.full((2, 2), 0.1, np.float32))
    assert result.terminated.all()
    state = {name: vec.get_attr(name) for name in ("mid", "inventory", "cash", "elapsed_steps")}
    later = vec.step(np.full((2, 2), 0.1, np.float32))
    assert later.rewards.tolist() == [0.0, 0.0] and later.infos == [{}, {}]
    np.testing.assert_array_equal(later.observations, result.observations)
    for name, values in state.items():
        assert vec.get_attr(name) == values, name


def test_step_before_reset_and_unknown_options() -> None:
    vec = MarketMakingVecEnv(2)
    with pytest.raises(sekai.ResetRequired):
        vec.step(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="accepts"):
        vec.reset(options={"strat": 1})
    with pytest.raises(ValueError, match="no price history"):
        vec.reset(options=[None, {"start": 3}])
    vec.reset(options=[{"start": None}, {}])


def test_autoreset_reports_the_final_step() -> None:
    vec = MarketMakingVecEnv(2, n_steps=2)
    vec.reset(seed=0)
    vec.step(np.ones((2, 2), np.float32))
    result = vec.step(np.ones((2, 2), np.float32))
    assert result.terminated.all()
    info = result.infos[0]
    assert info["final_info"]["timestamp"] == pytest.approx(1.0)
    assert info["reset_info"]["inventory"] == 0
    assert result.observations[0].tolist() == [0.0, 1.0]
    assert info["final_observation"][1] == 0.0


def test_max_episode_steps_truncates_every_sub_env() -> None:
    vec = sekai.make_vec("MarketMaking-v0", 2, max_episode_steps=3)
    vec.reset(seed=0)
    for _ in range(3):
        result = vec.step(np.ones((2, 2), np.float32))
    assert result.truncated.all() and not result.terminated.any()
    assert result.infos[0]["final_info"]["elapsed_steps"] == 3


def test_quote_helpers_return_one_row_per_sub_env() -> None:
    vec = MarketMakingVecEnv(3, n_steps=10, max_inventory=5)
    vec.reset(seed=0)
    action = vec.avellaneda_stoikov_action()
    assert action.shape == (3, 2) and action.dtype == np.float32
    assert action[0].tolist() == pytest.approx(
        MarketMakingEnv(n_steps=10).avellaneda_stoikov_action().tolist()
    )
    per_env = vec.call("avellaneda_stoikov_action")
    assert len(per_env) == 3 and per_env[0].shape == (2,)
    assert vec.optimal_quotes().shape == (3, 2)
    assert vec.call("fill_probability", np.zeros(3))[0].shape == (3,)  # shared: whole value


def test_optimal_quotes_match_the_single_envs_at_every_step() -> None:
    # A terminal penalty makes the table's rows differ from step to step.
    params = {**DETERMINISTIC, "terminal_penalty": 0.5, "max_inventory": 3}
    native, sync = _native_and_sync(**params)
    native.reset(seed=1)
    sync.reset(seed=1)
    held: set[int] = set()
    for step in range(12):
        assert native.get_attr("elapsed_steps") == [step] * 4
        np.testing.assert_array_equal(
            native.optimal_quotes(), np.stack(sync.call("optimal_quotes"))
        )
        held.update(native.get_attr("inventory"))
        actions = _actions(step, 4)
        native.step(actions)
        sync.step(actions)
    assert len(held) > 2  # the table was read at several inventories, not only flat


def test_infos_hold_python_scalars() -> None:
    vec = MarketMakingVecEnv(2)
    vec.reset(seed=0)
    info = vec.step(np.ones((2, 2), np.float32)).infos[1]
    assert type(info["inventory"]) is int and type(info["bid_filled"]) is bool
    assert type(info["cash"]) is float and type(info["dt"]) is float


def test_autoreset_matches_sync_step_for_step_in_a_deterministic_market() -> None:
    params = {**DETERMINISTIC, "n_steps": 3}
    native = sekai.make_vec("MarketMaking-v0", 4, **params)
    sync = sekai.make_vec("MarketMaking-v0", 4, vectorization_mode="sync", **params)
    native.reset(seed=0)
    sync.reset(seed=0)
    for step in range(10):
        actions = _actions(step, 4)
        a, b = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        for x, y in zip(a.infos, b.infos):
            assert sorted(x) == sorted(y)
            if "final_observation" in x:
                np.testing.assert_array_equal(x["final_observation"], y["final_observation"])
                assert x["reset_info"] == y["reset_info"]


def test_observations_stay_in_the_space_when_limits_are_lowered_mid_episode():
    single = sekai.make("MarketMaking-v0")
    vec = sekai.make_vec("MarketMaking-v0", 2, vector_kwargs={"autoreset": False})
    single.reset(seed=0)
    vec.reset(seed=0)
    quotes = np.full(2, 0.01, np.float32)  # tight quotes: fills, so the inventory moves
    for _ in range(5):
        single.step(quotes)
        vec.step(np.tile(quotes, (2, 1)))
    single.unwrapped.n_steps = 3  # the clock is now past the end of the session
    single.unwrapped.max_inventory = 1
    vec.set_attr("n_steps", 3)
    vec.set_attr("max_inventory", 1)
    obs = single.step(quotes).observation
    batch = vec.step(np.tile(quotes, (2, 1))).observations
    assert single.observation_space.contains(obs) and obs[1] == 0.0
    assert all(vec.observation_space.contains(row) for row in batch)
    assert batch[:, 1].tolist() == [0.0, 0.0]


def test_an_order_size_above_the_inventory_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="order_size=3 exceeds max_inventory=2"):
        MarketMakingVecEnv(2, order_size=3, max_inventory=2)
    vec = MarketMakingVecEnv(2, order_size=2, max_inventory=4)
    with pytest.raises(ValueError, match="order_size=5 exceeds max_inventory=4"):
        vec.set_attr("order_size", 5)
    with pytest.raises(ValueError, match="order_size=2 exceeds max_inventory=1"):
        vec.set_attr("max_inventory", [1, 1])
    with pytest.raises(ValueError, match="order_size=2 exceeds max_inventory=1"):
        vec.max_inventory = 1
    assert vec.get_attr("order_size") == [2, 2] and vec.get_attr("max_inventory") == [4, 4]


def test_fill_probability_is_checked_through_the_native_env() -> None:
    vec = MarketMakingVecEnv(2)
    assert type(vec.fill_probability(0.5)) is float
    assert [type(p) for p in vec.call("fill_probability", 0.5)] == [float, float]
    assert type(vec.fill_probability([0.5, 1.0])) is np.ndarray
    with pytest.raises(ValueError, match=r"offset must be >= 0"):
        vec.fill_probability(-1.0)
    with pytest.raises(ValueError, match="offset must not be NaN"):
        vec.call("fill_probability", np.array([np.nan]))
    with pytest.raises(TypeError, match="offset"):
        vec.call("fill_probability", "0.5")


def test_native_stops_at_the_limit_as_the_single_env_near_int64s_end() -> None:
    # q + size <= Q in int64 wrapped past 2**63 - 1 to a negative number: the bid still filled
    # and the inventory went to -2**63 while the single env (Python ints) stopped at the limit.
    kwargs = {**DETERMINISTIC, "max_inventory": 2**63 - 1, "order_size": 2**62}
    native = MarketMakingVecEnv(2, **kwargs)
    sync = sekai.make_vec("MarketMaking-v0", 2, vectorization_mode="sync", **kwargs)
    native.reset(seed=3)
    sync.reset(seed=3)
    quotes = np.array([[0.2, 3.0], [3.0, 0.2]], np.float32)  # always buying, always selling
    for _ in range(4):
        a, b = native.step(quotes), sync.step(quotes)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        assert native.get_attr("inventory") == sync.get_attr("inventory")
    assert native.get_attr("inventory") == [2**62, -(2**62)]
    assert a.observations[:, 0].tolist() == [0.5, -0.5]
