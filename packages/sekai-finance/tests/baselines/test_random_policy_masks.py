"""RandomPolicy under an action mask (finance.md §13.8): it draws uniformly among the allowed
actions only, for Discrete and MultiDiscrete spaces, tuple and array masks, one env or a batch."""

from __future__ import annotations

from typing import Any

import numpy as np

import sekai
from sekai.finance.baselines import RandomPolicy
from sekai.vector import SyncVecEnv

DRAWS = 400


class MaskedDiscreteEnv(sekai.Env[np.ndarray, int]):
    """Discrete(4, start=2) actions; only 3 and 5 are allowed."""

    observation_space = sekai.Box(0.0, 1.0, (1,))
    action_space: Any = sekai.Discrete(4, start=2)

    def reset(
        self, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[np.ndarray]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[np.ndarray]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})

    def action_mask(self) -> Any:
        return np.array([0, 1, 0, 1], np.int8)


class TupleMaskedMultiDiscreteEnv(MaskedDiscreteEnv):
    """MultiDiscrete([2, 3], start=[1, -1]) with a tuple mask: 2 first, then -1 or 1."""

    action_space = sekai.MultiDiscrete([2, 3], start=[1, -1])

    def action_mask(self) -> Any:
        return (np.array([0, 1], np.int8), np.array([1, 0, 1], np.int8))


class ArrayMaskedMultiDiscreteEnv(MaskedDiscreteEnv):
    """MultiDiscrete([3, 3]) with a (2, 3) array mask: 0 or 2 first, then 1."""

    action_space = sekai.MultiDiscrete([3, 3])

    def action_mask(self) -> Any:
        return np.array([[1, 0, 1], [0, 1, 0]], np.int8)


ALLOWED_PAIRS = {(2, -1), (2, 1)}


def test_masked_discrete_draws_exactly_the_allowed_actions() -> None:
    env = MaskedDiscreteEnv()
    env.reset(seed=0)
    policy = RandomPolicy(0)
    actions = [policy(None, env) for _ in range(DRAWS)]
    assert {type(a) for a in actions} == {int}
    assert set(actions) == {3, 5}


def test_masked_multi_discrete_with_a_tuple_mask_draws_exactly_the_allowed_actions() -> None:
    env = TupleMaskedMultiDiscreteEnv()
    env.reset(seed=0)
    policy = RandomPolicy(0)
    actions = [policy(None, env) for _ in range(DRAWS)]
    assert all(env.action_space.contains(a) for a in actions)
    assert {tuple(a.tolist()) for a in actions} == ALLOWED_PAIRS


def test_masked_multi_discrete_with_an_array_mask_draws_exactly_the_allowed_actions() -> None:
    env = ArrayMaskedMultiDiscreteEnv()
    env.reset(seed=0)
    policy = RandomPolicy(0)
    assert {tuple(policy(None, env).tolist()) for _ in range(DRAWS)} == {(0, 1), (2, 1)}


def test_masked_multi_discrete_batch_draws_exactly_the_allowed_actions() -> None:
    vec = SyncVecEnv([TupleMaskedMultiDiscreteEnv, TupleMaskedMultiDiscreteEnv])
    vec.reset(seed=0)
    policy = RandomPolicy(0)
    batches = [policy(None, vec) for _ in range(DRAWS // 2)]
    assert {b.shape for b in batches} == {(2, 2)}
    assert {tuple(row) for b in batches for row in b.tolist()} == ALLOWED_PAIRS
    vec.close()


def test_masked_discrete_batch_draws_exactly_the_allowed_actions() -> None:
    vec = SyncVecEnv([MaskedDiscreteEnv, MaskedDiscreteEnv, MaskedDiscreteEnv])
    vec.reset(seed=0)
    policy = RandomPolicy(0)
    batches = [policy(None, vec) for _ in range(DRAWS // 3)]
    assert {b.shape for b in batches} == {(3,)}
    assert set(np.concatenate(batches).tolist()) == {3, 5}
    vec.close()


def test_limit_order_book_actions_respect_the_inventory_limits() -> None:
    env = sekai.make("LimitOrderBook-v0", max_inventory=2, session_length=30.0)
    result = env.reset(seed=0)
    policy = RandomPolicy(0)
    limited = 0
    while not result.done:
        mask = env.unwrapped.action_mask()
        limited += not all(part.all() for part in mask)
        action = policy(result.observation, env)
        assert all(mask[i][action[i]] for i in range(3))
        result = env.step(action)
    assert limited > 0  # the inventory limit was reached: the mask did restrict the draws


class _LowestDraws:
    """A generator stand-in whose uniform draws are all 0.0, the lowest value ``random()`` gives."""

    def random(self, size: int) -> np.ndarray:
        return np.zeros(size)


def test_the_lowest_uniform_draw_still_picks_an_allowed_action() -> None:
    env = MaskedDiscreteEnv()
    env.reset(seed=0)
    policy = RandomPolicy(0)
    policy.rng = _LowestDraws()  # type: ignore[assignment]
    assert policy(None, env) == 3  # the first allowed action, not the masked-out 2
