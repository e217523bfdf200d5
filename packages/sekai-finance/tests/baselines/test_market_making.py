"""Tests for the MarketMaking-v0 baselines: the exact values of finance.md §13.4 and simulations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market_making import MarketMakingEnv, avellaneda_stoikov_quotes
from sekai.finance.baselines import RandomPolicy, evaluate
from sekai.finance.baselines.market_making import (
    AvellanedaStoikov,
    ConstantQuotes,
    OptimalQuotes,
    evaluate_quotes,
    expected_random_return,
    market_making_params,
    solve_optimal_quotes,
)


def _as_quotes(env: MarketMakingEnv) -> Any:
    p = market_making_params(env)

    def quotes(t: int, q: np.ndarray) -> np.ndarray:
        tau = (p.n_steps - t) * p.dt
        return avellaneda_stoikov_quotes(q, tau, p.sigma, p.risk_aversion, p.k, p.max_offset)

    return quotes


def test_dp_optimum_has_the_exact_value() -> None:
    table = solve_optimal_quotes(MarketMakingEnv())
    assert table.value == pytest.approx(59.108, abs=5e-4)
    assert table.quotes.shape == (200, 101, 2) and table.quotes.dtype == np.float32
    assert evaluate_quotes(MarketMakingEnv(), table) == pytest.approx(table.value, abs=1e-9)


def test_dp_table_is_cached_per_parameter_set() -> None:
    assert solve_optimal_quotes(MarketMakingEnv()) is solve_optimal_quotes(MarketMakingEnv())
    assert solve_optimal_quotes(MarketMakingEnv(risk_aversion=0.2)) is not solve_optimal_quotes(
        MarketMakingEnv()
    )


def test_dp_quotes_skew_against_inventory_and_block_the_limit() -> None:
    table = solve_optimal_quotes(MarketMakingEnv())
    long_quotes = table.lookup(0, 10)
    assert long_quotes[0] > long_quotes[1]  # long: lean on the ask
    assert table.lookup(0, 50)[0] == 5.0  # at +Q the bid is not quoted (max_offset)
    assert table.lookup(0, -50)[1] == 5.0


def test_avellaneda_stoikov_has_the_exact_value() -> None:
    env = MarketMakingEnv()
    assert evaluate_quotes(env, _as_quotes(env)) == pytest.approx(56.76, abs=5e-3)


@pytest.mark.parametrize(
    ("offset", "expected"),
    [(0.80, 54.64), (1 / 1.5, 53.49), (1.0, 52.87), (0.5, 48.18), (1.5, 40.02), (5.0, 0.76)],
)
def test_constant_quotes_have_the_exact_values(offset: float, expected: float) -> None:
    value = evaluate_quotes(MarketMakingEnv(), lambda t, q: np.full((q.size, 2), offset))
    assert value == pytest.approx(expected, abs=5e-3)


def test_random_quotes_have_the_exact_value() -> None:
    assert expected_random_return(MarketMakingEnv()) == pytest.approx(19.87, abs=5e-3)


def test_random_quotes_simulated_match_the_exact_value() -> None:
    mean, se = evaluate(RandomPolicy(0), "MarketMaking-v0", 2048)
    assert abs(mean - expected_random_return(MarketMakingEnv())) < 4 * se


def test_random_quotes_exact_value_converges_like_simpsons_rule() -> None:
    env = MarketMakingEnv()
    # Simpson's error falls as h^4: 1,001 nodes already agree with 200,001 to ~1e-10.
    assert expected_random_return(env, points=1001) == pytest.approx(
        expected_random_return(env), abs=1e-8
    )


def test_random_quotes_exact_value_scales_the_edge_by_the_order_size() -> None:
    mean, se = evaluate(RandomPolicy(0), "MarketMaking-v0", 2048, order_size=2)
    assert abs(mean - expected_random_return(MarketMakingEnv(order_size=2))) < 4 * se


def test_optimal_quotes_reach_the_dp_value_in_simulation() -> None:
    mean, se = evaluate(OptimalQuotes(), "MarketMaking-v0", 6144)
    assert se < 0.15
    assert abs(mean - 59.108) < 4 * se


def test_avellaneda_stoikov_reaches_its_value_in_simulation() -> None:
    mean, se = evaluate(AvellanedaStoikov(), "MarketMaking-v0", 6144)
    assert abs(mean - 56.76) < 4 * se


def test_optimal_quotes_beat_avellaneda_stoikov_on_common_random_numbers() -> None:
    def returns(policy: Any) -> np.ndarray:
        vec = sekai.make_vec("MarketMaking-v0", 2048, vector_kwargs={"autoreset": False})
        result = vec.reset(seed=5)
        total = np.zeros(2048)
        for _ in range(200):
            result = vec.step(policy(result.observations, vec))
            total += result.rewards
        assert result.dones.all()
        return total

    difference = returns(OptimalQuotes()) - returns(AvellanedaStoikov())
    assert difference.mean() > 4 * difference.std() / np.sqrt(difference.size)


def test_policies_work_on_single_sync_and_native_envs() -> None:
    single = MarketMakingEnv()
    observation = single.reset(seed=0).observation
    sync = sekai.make_vec("MarketMaking-v0", 2, vectorization_mode="sync")
    native = sekai.make_vec("MarketMaking-v0", 2)
    batches = [sync.reset(seed=0).observations, native.reset(seed=0).observations]
    for policy in (AvellanedaStoikov(), OptimalQuotes(), ConstantQuotes(0.8)):
        action = policy(observation, single)
        assert action.shape == (2,) and action.dtype == np.float32
        for vec, batch in zip((sync, native), batches):
            actions = policy(batch, vec)
            assert actions.shape == (2, 2)
            np.testing.assert_array_equal(actions[0], action)
    assert AvellanedaStoikov()(observation, single).tolist() == pytest.approx([0.8453852] * 2)


def test_policies_reach_the_env_through_wrappers() -> None:
    env = sekai.TimeLimit(MarketMakingEnv(), 5)
    env.reset(seed=0)
    env.step(np.array([0.0, 0.0], np.float32))
    expected = env.unwrapped.avellaneda_stoikov_action()
    np.testing.assert_array_equal(AvellanedaStoikov()(None, env), expected)
    assert OptimalQuotes()(None, env).shape == (2,)


def test_constant_quotes_repr_and_asymmetry() -> None:
    policy = ConstantQuotes(0.5, 1.0)
    assert repr(policy) == "ConstantQuotes(0.5, 1.0)"
    assert policy(None, MarketMakingEnv()).tolist() == [0.5, 1.0]


@pytest.mark.parametrize("max_offset", [0.0015, 0.5005])
def test_the_optimum_searches_up_to_max_offset_off_the_grid_step(max_offset):
    # The DP searches quotes on a 0.001 grid; a max_offset between grid points is a quote too,
    # so no constant quote (here: max_offset on both sides) can beat the optimum.
    env = MarketMakingEnv(max_offset=max_offset, n_steps=3, fill_intensity=1400.0)
    limit = evaluate_quotes(env, lambda t, q: np.full((len(q), 2), max_offset))
    assert solve_optimal_quotes(env).value >= limit - 1e-12
