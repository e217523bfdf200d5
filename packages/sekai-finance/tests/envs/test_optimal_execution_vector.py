"""Tests for OptimalExecutionVecEnv: the frozen-sub-env example, parity, attribute rules."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv


def test_the_vector_page_frozen_example_prints_what_it_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    vec = sekai.make_vec("OptimalExecution-v0", 3, vector_kwargs={"autoreset": False})
    vec.reset(seed=0)
    sell = np.array([[1.0], [0.5], [0.5]], np.float32)  # sub-env 0 sells everything at once
    first = vec.step(sell)
    later = vec.step(sell)
    print(first.dones, later.dones)
    print(later.rewards[0], later.infos[0])
    print(np.array_equal(later.observations[0], first.observations[0]))
    vec.close()
    assert capsys.readouterr().out.splitlines() == [
        "[ True False False] [ True False False]",
        "0.0 {}",
        "True",
    ]
    assert type(vec).__name__ == "OptimalExecutionVecEnv"


def test_native_reproduces_the_single_env_without_volatility() -> None:
    fractions = np.array([[0.1], [0.3], [0.05], [0.7]], np.float32)
    vec = OptimalExecutionVecEnv(4, autoreset=False, sigma=0.0)
    batch = vec.reset(seed=3)
    singles = [OptimalExecutionEnv(sigma=0.0) for _ in range(4)]
    for i, env in enumerate(singles):
        first = env.reset(seed=i)
        np.testing.assert_array_equal(batch.observations[i], first.observation)
        assert batch.infos[i].keys() == first.info.keys()
    done = np.zeros(4, bool)
    for _ in range(25):
        result = vec.step(fractions)
        for i, env in enumerate(singles):
            if done[i]:
                continue
            single = env.step(fractions[i])
            np.testing.assert_array_equal(result.observations[i], single.observation)
            assert result.rewards[i] == single.reward
            assert result.terminated[i] == single.terminated
            assert result.infos[i] == single.info
            assert [type(v) for v in result.infos[i].values()] == [float] * 8
        done |= result.dones
    assert done.all()


def test_almgren_chriss_mean_matches_the_exact_expectation() -> None:
    vec = OptimalExecutionVecEnv(4000, autoreset=False)
    schedule = vec.almgren_chriss_actions()
    vec.reset(seed=0)
    total = np.zeros(4000)
    for k in range(25):
        total += vec.step(np.repeat(schedule[k][None], 4000, axis=0)).rewards
    se = total.std() / np.sqrt(total.size)
    assert abs(total.mean() + 320.34) < 4 * se
    assert 140 < total.std() < 180  # per-episode sd about 161 bps


def test_parameters_are_shared_and_tau_is_derived() -> None:
    vec = OptimalExecutionVecEnv(2)
    assert vec.get_attr("eta") == [2.5e-6, 2.5e-6]
    vec.set_attr("n_steps", 10)
    assert vec.get_attr("tau") == [0.5, 0.5] and vec.get_attr("dt") == [0.5, 0.5]
    assert vec.almgren_chriss_trajectory()[-1] == 0.0
    with pytest.raises(AttributeError, match=r"OptimalExecutionVecEnv.tau is read-only: .*derived"):
        vec.set_attr("tau", 0.1)
    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        vec.set_attr("sigma", [0.5, 0.6])
    with pytest.raises(ValueError, match="eta - gamma"):
        vec.set_attr("gamma", 1.0)
    vec.set_attr("sigma", [0.0, 0.0])
    vec.reset(seed=0)
    assert vec.step(np.zeros((2, 1), np.float32)).infos[0]["mid_price"] == 50.0


def test_schedule_is_shared_by_every_sub_env() -> None:
    vec = OptimalExecutionVecEnv(25)
    schedules = vec.call("almgren_chriss_actions")
    assert len(schedules) == 25 and all(s.shape == (25, 1) for s in schedules)
    np.testing.assert_array_equal(schedules[3], OptimalExecutionEnv().almgren_chriss_actions())


def test_state_is_per_sub_env() -> None:
    vec = OptimalExecutionVecEnv(2, autoreset=False)
    vec.reset(seed=0)
    vec.step(np.array([[1.0], [0.25]], np.float32))
    assert vec.get_attr("inventory") == [0.0, 750_000.0]
    assert vec.get_attr("elapsed_steps") == [1, 1]
    assert vec.get_attr("time_remaining") == pytest.approx([4.8, 4.8])
    vec.step(np.array([[1.0], [0.25]], np.float32))
    assert vec.get_attr("elapsed_steps") == [1, 2]  # the frozen sub-env's clock stopped
    assert vec.get_attr("inventory") == [0.0, 562_500.0]
    with pytest.raises(AttributeError, match="per-sub-env state"):
        vec.set_attr("mid", 1.0)


def test_unknown_reset_options_are_refused() -> None:
    vec = OptimalExecutionVecEnv(2)
    with pytest.raises(ValueError, match="accepts"):
        vec.reset(options={"inventory": 5})


def test_invalid_actions_are_refused_before_stepping() -> None:
    vec = OptimalExecutionVecEnv(2)
    vec.reset(seed=0)
    with pytest.raises(sekai.InvalidAction):
        vec.step(np.array([[np.nan], [0.5]], np.float32))
    with pytest.raises(ValueError):
        vec.step(np.zeros((3, 1), np.float32))
    assert vec.get_attr("elapsed_steps") == [0, 0]


def test_autoreset_matches_sync_step_for_step_without_volatility() -> None:
    native = sekai.make_vec("OptimalExecution-v0", 3, sigma=0.0)
    sync = sekai.make_vec("OptimalExecution-v0", 3, vectorization_mode="sync", sigma=0.0)
    native.reset(seed=0)
    sync.reset(seed=0)
    actions = np.array([[1.0], [0.5], [0.2]], np.float32)  # episodes end at different steps
    for _ in range(30):
        a, b = native.step(actions), sync.step(actions)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.terminated, b.terminated)
        for x, y in zip(a.infos, b.infos):
            assert sorted(x) == sorted(y)
            if "final_observation" in x:
                np.testing.assert_array_equal(x["final_observation"], y["final_observation"])
                assert x["final_info"] == y["final_info"]
                assert x["reset_info"] == y["reset_info"]
    np.testing.assert_array_equal(native.unwrapped._build_observation(), a.observations)


def test_expected_shortfall_is_checked_through_the_native_env() -> None:
    vec = OptimalExecutionVecEnv(2)
    twap = np.full(25, 4e4)
    assert vec.expected_shortfall(twap) == OptimalExecutionEnv().expected_shortfall(twap)
    assert vec.call("expected_shortfall", twap)[1] == vec.expected_shortfall(twap)
    with pytest.raises(ValueError, match="trades must be 25 trades"):
        vec.expected_shortfall(np.full(5, 2e5))
    with pytest.raises(ValueError, match="trades must sum to initial_inventory"):
        vec.call("expected_shortfall", np.zeros(25))
    with pytest.raises(TypeError, match="trades"):
        vec.expected_shortfall(["4e4"] * 25)
