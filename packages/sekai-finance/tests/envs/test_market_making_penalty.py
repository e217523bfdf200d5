"""MarketMaking-v0's reward with inventory left after a one-sided fill (finance.md §12.3).

``reward = (cash + q·mid) − W₀ − ½·γ·σ²·dt·q²`` with ``q`` the inventory after the fills and
``mid`` the mid after its move. The single env is checked against a replay of its own draws
(one ``rng.random(2)`` then one ``rng.standard_normal()`` a step); the native env, whose draw
scheme is free (§11.4), against its infos.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.vector.market_making import MarketMakingVecEnv

# A fill 0.3 from the mid is almost certain (p ≈ 0.998), one 4.0 away rare (p ≈ 0.024). A large
# γ and lot make the penalty (0.045 at q = 3) far larger than any rounding.
PARAMS: dict[str, Any] = {"fill_intensity": 2000.0, "risk_aversion": 0.5, "order_size": 3}
BID_ONLY = np.array([0.3, 4.0], np.float32)
SEED = 7


def _penalty(env: MarketMakingEnv, q: int) -> float:
    return 0.5 * env.risk_aversion * env.sigma**2 * env.dt * q * q


def test_single_env_reward_matches_a_replay_of_its_draws() -> None:
    """Catches: the penalty left out, computed with the inventory before the fills (0 on the
    first step), missing ½, dt or the square of σ; wealth marked at the mid before its move;
    W₀ ignoring the inventory already held (second step); bid priced above the mid; the
    normal drawn before the uniforms."""
    env = MarketMakingEnv(**PARAMS)
    env.reset(seed=SEED)
    replay = np.random.default_rng(SEED)
    delta_bid, delta_ask = (float(x) for x in BID_ONLY)  # float32 values, as the env clips them
    size, dt, sigma = env.order_size, env.dt, env.sigma
    mid, cash, q = env.s0, 0.0, 0
    for step in range(2):
        u = replay.random(2)
        z = float(replay.standard_normal())
        bid_fills = bool(u[0] < env.fill_probability(delta_bid))
        ask_fills = bool(u[1] < env.fill_probability(delta_ask))
        assert (bid_fills, ask_fills) == (True, False), "the scenario needs a bid-only fill"
        wealth_before = cash + q * mid
        bid, ask = mid - delta_bid, mid + delta_ask
        q += size  # the bid filled: one lot bought at the bid
        cash -= size * bid
        mid = mid + sigma * math.sqrt(dt) * z
        gamma = PARAMS["risk_aversion"]
        expected = (cash + q * mid) - wealth_before - 0.5 * gamma * sigma**2 * dt * q**2

        result = env.step(BID_ONLY)
        info = result.info
        assert (info["bid_filled"], info["ask_filled"]) == (True, False)
        assert info["inventory"] == q == size * (step + 1)  # q != 0: the penalty applies
        assert info["bid"] == bid and info["ask"] == ask
        assert info["cash"] == cash and info["mid_price"] == mid
        assert _penalty(env, q) > 0.04  # what a penalty-free reward would be off by, at least
        assert abs(result.reward - expected) < 1e-9, (step, result.reward, expected)


def test_native_reward_matches_its_infos_with_one_sided_fills() -> None:
    """The same formula on MarketMakingVecEnv, each sub-env against its own infos: bid-only,
    ask-only, both and no fills side by side. Catches the batched penalty using the inventory
    before the fills, the old mid, or one sub-env's inventory for another (a broadcast bug)."""
    n = 16
    quotes = [BID_ONLY, BID_ONLY[::-1], np.array([0.3, 0.3]), np.array([4.0, 4.0])]
    actions = np.array([quotes[i % 4] for i in range(n)], np.float32)
    vec = MarketMakingVecEnv(n, **PARAMS)
    tpl = vec.template
    before = vec.reset(seed=SEED).infos
    one_sided = 0
    for _ in range(3):
        result = vec.step(actions)
        for i, (prev, info) in enumerate(zip(before, result.infos)):
            q = info["inventory"]
            fills = int(info["bid_filled"]) - int(info["ask_filled"])
            assert q == prev["inventory"] + tpl.order_size * fills
            # fill accounting: cash moves by one lot at the quoted prices
            assert info["bid"] == prev["mid_price"] - float(actions[i, 0])
            assert info["ask"] == prev["mid_price"] + float(actions[i, 1])
            bought = info["bid"] * info["bid_filled"] - info["ask"] * info["ask_filled"]
            assert abs(info["cash"] - (prev["cash"] - tpl.order_size * bought)) < 1e-9
            expected = (
                (info["cash"] + q * info["mid_price"])
                - (prev["cash"] + prev["inventory"] * prev["mid_price"])
                - _penalty(tpl, q)
            )
            assert abs(result.rewards[i] - expected) < 1e-9, (i, result.rewards[i], expected)
            one_sided += info["bid_filled"] != info["ask_filled"] and q != 0
        before = result.infos
    assert one_sided >= n  # many one-sided fills with inventory held: the penalty was exercised
