"""The order-book envs' price scale: prices and cash are integer ticks, but the mid and
``inventory * mid`` are float64, exact while ``max_inventory * (bid + ask) <= 2**53``. A
``mid_price`` above ``2**53 // (4 * max_inventory)`` (room for prices to double) is refused,
when the env is built and when ``max_inventory`` is set; up to it, every reward is the exact
change of ``cash + inventory * mid`` and the observed offsets from the mid are exact."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.lob_market import LimitOrderBookMarket


def largest_mid(max_inventory: int) -> int:
    return 2**53 // (4 * max_inventory)


ABOVE = (
    r"mid_price={mid} is above 2\*\*53 // \(4 \* max_inventory\) = {largest} \(with "
    r"max_inventory={limit}\), beyond which the env's prices and P&L are not exact in float64"
)


@pytest.mark.parametrize("env", [LimitOrderBookEnv, LimitOrderBookMarket])
@pytest.mark.parametrize("limit", [20, 3])
def test_a_mid_price_beyond_the_exact_float64_scale_is_refused(env: type, limit: int) -> None:
    largest = largest_mid(limit)
    for mid in (largest + 1, 10**16):
        message = ABOVE.format(mid=mid, largest=largest, limit=limit)
        with pytest.raises(ValueError, match=f"^{message}"):
            env(mid_price=mid, max_inventory=limit)
    env(mid_price=largest, max_inventory=limit).reset(seed=0)


def test_setting_max_inventory_beyond_the_scale_of_the_mid_price_is_refused_and_undone() -> None:
    refused = (
        r"^setting max_inventory=21 puts mid_price=112589990684262 above 2\*\*53 // "
        r"\(4 \* max_inventory\) = 107228562556440 \(with max_inventory=21\)"
    )
    env = sekai.make("LimitOrderBook-v0", mid_price=largest_mid(20)).unwrapped
    with pytest.raises(ValueError, match=refused):
        env.max_inventory = 21
    assert env.max_inventory == 20
    env.max_inventory = 19
    vec = sekai.make_vec("LimitOrderBook-v0", 2, mid_price=largest_mid(20))
    with pytest.raises(ValueError, match=refused):
        vec.set_attr("max_inventory", 21)
    assert vec.get_attr("max_inventory") == [20, 20]


def _exact_wealth(env: Any) -> Fraction:
    book, trader = env.book, env.trader
    return Fraction(trader.cash) + trader.inventory * Fraction(book.best_bid() + book.best_ask(), 2)


@pytest.mark.parametrize("limit", [20, 2])
def test_rewards_and_offsets_are_exact_up_to_the_largest_mid_price(limit: int) -> None:
    # At 10**16 ticks the rewards were off by up to 32.5 ticks, the offsets by 1.5.
    env = LimitOrderBookEnv(
        mid_price=largest_mid(limit),
        max_inventory=limit,
        session_length=200.0,
        inventory_penalty=0.0,
    )
    result = env.reset(seed=0)
    rng = np.random.default_rng(0)
    wealth, held = _exact_wealth(env), set()
    while not result.done:
        masks = env.action_mask()
        result = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        now = _exact_wealth(env)
        assert result.reward == now - wealth  # a float equal to the exact change
        wealth = now
        mid = Fraction(env.book.best_bid() + env.book.best_ask(), 2)
        assert result.observation["book"][0, 0] == env.book.best_bid() - mid
        assert result.observation["book"][0, 2] == env.book.best_ask() - mid
        held.add(abs(env.trader.inventory))
    assert max(held) > 0  # the wealth did hold inventory * mid
