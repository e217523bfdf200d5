"""Tests for the OptimalExecution-v0 baselines: exact values of finance.md §13.5 and simulations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.finance.baselines import RandomPolicy, evaluate
from sekai.finance.baselines.optimal_execution import (
    TWAP,
    AlmgrenChriss,
    expected_return,
    schedule_trades,
    twap_actions,
)


def test_exact_values_of_the_reference_table() -> None:
    env = OptimalExecutionEnv()
    assert expected_return(env, env.almgren_chriss_actions()) == pytest.approx(-320.34, abs=5e-3)
    assert expected_return(env, twap_actions(25)) == pytest.approx(-419.52, abs=5e-3)
    assert expected_return(env, np.ones(25)) == pytest.approx(-2512.5, abs=1e-6)
    assert expected_return(env, np.zeros(25)) == pytest.approx(-3378.9, abs=5e-2)


def test_schedule_trades_replays_the_env() -> None:
    trades = schedule_trades(twap_actions(25), 1e6, 25)
    np.testing.assert_allclose(trades, 4e4, rtol=1e-6)
    assert schedule_trades([1.0, 0.3], 10.0, 2).tolist() == [10.0, 0.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_schedule_trades_are_the_trades_of_an_episode_exactly(dtype: Any) -> None:
    actions = np.full(25, 0.1, dtype=dtype)
    env = OptimalExecutionEnv(sigma=0.0)
    env.reset(seed=0)
    sold = []
    for action in actions:
        result = env.step(np.array([action]))
        sold.append(result.info["shares_sold"])
        if result.done:
            break
    assert schedule_trades(actions, 1e6, 25).tolist() == sold


def test_almgren_chriss_reaches_its_exact_value_in_simulation() -> None:
    mean, se = evaluate(AlmgrenChriss(), "OptimalExecution-v0", 8192)
    assert se < 2.5
    assert abs(mean + 320.34) < 4 * se


def test_twap_reaches_its_exact_value_in_simulation() -> None:
    mean, se = evaluate(TWAP(), "OptimalExecution-v0", 8192)
    assert abs(mean + 419.52) < 4 * se


def test_random_fractions_match_the_measured_reference() -> None:
    mean, se = evaluate(RandomPolicy(1), "OptimalExecution-v0", 8192)
    assert abs(mean + 1293.9) < 4 * np.hypot(se, 3.5)  # [measured] -1293.9 ± 3.5


def test_almgren_chriss_beats_twap_on_common_random_numbers() -> None:
    def returns(policy: Any) -> np.ndarray:
        vec = sekai.make_vec("OptimalExecution-v0", 4096, vector_kwargs={"autoreset": False})
        result = vec.reset(seed=3)
        total = np.zeros(4096)
        for _ in range(25):
            result = vec.step(policy(result.observations, vec))
            total += result.rewards
        assert result.dones.all()
        return total

    difference = returns(AlmgrenChriss()) - returns(TWAP())
    assert difference.mean() > 4 * difference.std() / np.sqrt(difference.size)


def test_policies_work_on_single_sync_and_native_envs() -> None:
    single = OptimalExecutionEnv()
    observation = single.reset(seed=0).observation
    single.step(np.array([0.1], np.float32))
    sync = sekai.make_vec("OptimalExecution-v0", 2, vectorization_mode="sync")
    native = sekai.make_vec("OptimalExecution-v0", 2)
    schedule = single.almgren_chriss_actions()
    for vec in (sync, native):
        vec.reset(seed=0)
        vec.step(np.full((2, 1), 0.1, np.float32))
        np.testing.assert_array_equal(AlmgrenChriss()(None, vec), np.tile(schedule[1], (2, 1)))
        np.testing.assert_allclose(TWAP()(None, vec), np.full((2, 1), 1 / 24))
    assert AlmgrenChriss()(observation, single).tolist() == schedule[1].tolist()
    assert TWAP()(observation, single).tolist() == pytest.approx([1 / 24])


def test_twap_actions_are_one_over_the_steps_left() -> None:
    actions = twap_actions(4)
    assert actions.shape == (4, 1) and actions.dtype == np.float32
    assert actions[:, 0].tolist() == pytest.approx([0.25, 1 / 3, 0.5, 1.0])
    assert repr(TWAP()) == "TWAP()" and repr(AlmgrenChriss()) == "AlmgrenChriss()"
