"""LimitOrderBook-v0 baselines: inventory skew and fixed quotes, and their scores (§13.7)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.finance.baselines._evaluate import evaluate
from sekai.finance.baselines.lob import FixedQuotes, InventorySkew


def within(mean: float, error: float, reference: float, reference_error: float) -> bool:
    """Within 4 combined standard errors (finance.md §13.1)."""
    return abs(mean - reference) <= 4 * float(np.hypot(error, reference_error))


@pytest.mark.parametrize(
    ("inventory", "action"),
    [
        (0, [1, 1, 1]),
        (2, [1, 1, 1]),
        (3, [2, 1, 1]),
        (-7, [1, 3, 1]),
        (20, [5, 1, 1]),
        (-20, [1, 5, 1]),
    ],
)
def test_inventory_skew_steps_the_opposite_quote_back(inventory: int, action: list[int]) -> None:
    assert InventorySkew().action_for(inventory, 5).tolist() == action


def test_inventory_skew_reads_inventory_from_the_observation() -> None:
    env = LimitOrderBookEnv(max_inventory=10)
    obs = env.reset(seed=0).observation
    obs["agent"][0] = -0.6  # six lots short
    assert InventorySkew(lots_per_level=2).__call__(obs, env).tolist() == [1, 4, 1]


def test_inventory_skew_reads_every_inventory_exactly_from_the_float32_observation() -> None:
    # the observation holds inventory / max_inventory in float32: 7 / 20 reads back as 6.99...
    env = LimitOrderBookEnv(max_quote_offset=21)
    obs = env.reset(seed=0).observation
    policy = InventorySkew(lots_per_level=1)
    inventories = np.arange(-20, 21)
    expected = policy.action_for(inventories, 21).tolist()
    singles = []
    for q in inventories:
        obs["agent"][0] = np.float32(q / 20)
        singles.append(policy(obs, env).tolist())
    assert singles == expected
    batch = np.tile(obs["agent"], (len(inventories), 1))
    batch[:, 0] = (inventories / 20).astype(np.float32)
    assert policy({**obs, "agent": batch}, env).tolist() == expected


def test_inventory_skew_returns_a_batch_for_a_vector_env() -> None:
    vec = sekai.make_vec("LimitOrderBook-v0", 3)
    result = vec.reset(seed=0)
    actions = InventorySkew()(result.observations, vec)
    assert actions.shape == (3, 3) and (actions == [1, 1, 1]).all()
    vec.close()


def test_inventory_skew_drives_a_trader_of_the_multi_agent_market() -> None:
    env = LimitOrderBookMarket(2)
    result: Any = env.reset(seed=0)
    policy = InventorySkew()
    while env.agents:
        result = env.step({a: policy(result.observations[a], env) for a in env.acting})
    assert all(abs(env.inventory(a)) <= 20 for a in env.possible_agents)


def test_inventory_skew_rejects_a_bad_lot_count() -> None:
    with pytest.raises(ValueError, match="lots_per_level"):
        InventorySkew(0)


def test_fixed_quotes() -> None:
    assert repr(FixedQuotes(2, 2)) == "FixedQuotes(2, 2, 1)"
    vec = sekai.make_vec("LimitOrderBook-v0", 2)
    assert FixedQuotes()(None, vec).tolist() == [[1, 1, 1], [1, 1, 1]]
    vec.close()


def test_fixed_quotes_gives_a_fresh_action_each_call() -> None:
    policy, env = FixedQuotes(2, 3, 0), LimitOrderBookEnv()
    action = policy(None, env)
    action[:] = 0  # changing one returned action changes no later one
    assert policy(None, env).tolist() == [2, 3, 0]


def test_idle_scores_exactly_zero() -> None:
    assert evaluate(FixedQuotes(0, 0), "LimitOrderBook-v0", episodes=4, seed=0) == (0.0, 0.0)


def test_inventory_skew_and_joining_both_sides_score_the_documented_bars() -> None:
    # finance.md §13.7 (2,000 episodes): inventory skew +95.7 ± 0.3 (per-episode sd ≈ 13),
    # join both sides −24.9 ± 3.5 (sd ≈ 156); common random numbers for the comparison.
    skew, skew_error = evaluate(
        InventorySkew(), "LimitOrderBook-v0", episodes=100, seed=0, num_envs=50
    )
    join, join_error = evaluate(
        FixedQuotes(1, 1), "LimitOrderBook-v0", episodes=100, seed=0, num_envs=50
    )
    assert within(skew, skew_error, 95.7, 0.3), (skew, skew_error)
    assert within(join, join_error, -24.9, 3.5), (join, join_error)
    assert skew > join + 60
