"""LimitOrderBook-v0 and LimitOrderBookMarket through sekai.compat (gymnasium, PettingZoo)."""

from __future__ import annotations

import numpy as np
from pettingzoo.test import parallel_api_test

import sekai
from sekai.compat import to_gymnasium, to_pettingzoo


def test_migration_page_prints_the_action_space_and_a_15_long_mask() -> None:
    lob = to_gymnasium(sekai.FlattenObservation(sekai.make("LimitOrderBook-v0")))
    lob.reset(seed=0)
    assert f"{lob.action_space} {lob.action_masks().shape}" == "MultiDiscrete([6 6 3]) (15,)"
    assert type(lob.observation_space).__name__ == "Box"


def test_gymnasium_mask_blocks_buying_at_the_long_limit() -> None:
    lob = to_gymnasium(sekai.FlattenObservation(sekai.make("LimitOrderBook-v0", max_inventory=1)))
    lob.reset(seed=0)
    for _ in range(5):  # market buys until the inventory limit binds
        lob.step(np.array([0, 0, 2]))
    mask = lob.action_masks()
    assert mask.dtype == np.bool_
    assert mask.tolist() == [True] + [False] * 5 + [True] * 6 + [True, True, False]


def test_pettingzoo_parallel_api_test_passes() -> None:
    parallel_api_test(to_pettingzoo(sekai.envs.LimitOrderBookMarket(3)), num_cycles=200)
