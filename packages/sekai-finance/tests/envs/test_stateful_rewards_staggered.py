"""Stateful rewards on native envs whose sub-envs end at different steps (finance.md §8, §11).

A native env holds one reward object for all sub-envs and resets it with ``reset(mask)`` for
the sub-envs being reset; a SyncVecEnv holds one copy per sub-env. On a history with fixed and
sequential starts the two must give the same rewards, which only holds if a partial reset
clears exactly the masked sub-envs' state. The sub-envs are staggered by wiping some out on a
schedule: a trade whose cost is at least 1 takes all equity and terminates the episode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance import SequentialStart
from sekai.finance.costs import ProportionalCost
from sekai.finance.rewards import (
    DifferentialSharpe,
    DrawdownPenalty,
    LogReturn,
    RewardFunction,
    StepOutcome,
)

N = 4
LOOKBACK, LENGTH = 4, 9
WIPE_PERIODS = (None, 5, 7, 13)  # sub-env k wipes out every WIPE_PERIODS[k] steps (0: never)


def walk(rows: int, n: int, seed: int = 5) -> np.ndarray:
    steps = np.random.default_rng(seed).normal(0.0, 0.02, (rows, n))
    return 100 * np.exp(np.cumsum(steps, axis=0))


def wipes(step: int) -> np.ndarray:
    return np.array([p is not None and (step + k) % p == 0 for k, p in enumerate(WIPE_PERIODS)])


class RuinousRates(ProportionalCost):
    """``ProportionalCost``'s per-asset arithmetic with a rate above 1, which it refuses."""

    def __init__(self, rates: list[float]) -> None:
        self.rate = np.array(rates)


def trading_setup() -> tuple[dict[str, Any], Callable[[int], np.ndarray]]:
    # Position 25 from any position in [0, 1] trades >= 24 at 5 %: a cost >= 1 wipes out
    # (the env warns sekai.WipeOutWarning for it, ignored by the tests below).
    kw = {
        "prices": walk(220, 1)[:, 0],
        "positions": (0.0, 0.5, 1.0, 25.0),
        "transaction_cost": 0.05,
    }
    rng = np.random.default_rng(1)

    def actions(step: int) -> np.ndarray:
        return np.where(wipes(step), 3, rng.integers(0, 3, N))

    return kw, actions


def portfolio_setup() -> tuple[dict[str, Any], Callable[[int], np.ndarray]]:
    # Asset 2 costs 500 % to trade: a whole-equity trade into it wipes out; otherwise untouched.
    kw = {"prices": walk(220, 3), "transaction_cost": RuinousRates([0.002, 0.002, 5.0])}
    rng = np.random.default_rng(2)

    def actions(step: int) -> np.ndarray:
        scores = rng.uniform(0.0, 1.0, (N, 4))
        scores[:, 2] = 0.0
        scores[wipes(step)] = [0.0, 0.0, 1.0, 0.0]
        return scores.astype(np.float32)

    return kw, actions


SETUPS = {"Trading-v0": trading_setup, "Portfolio-v0": portfolio_setup}
REWARDS = {
    "drawdown": lambda: DrawdownPenalty(),
    "sharpe": lambda: DifferentialSharpe(0.2),
    "combined": lambda: LogReturn() - 0.5 * DrawdownPenalty() + 0.1 * DifferentialSharpe(0.1),
}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def check_same(native: Any, sync: Any, where: str) -> None:
    assert same(native.observations, sync.observations), f"observations differ {where}"
    for i, (mine, theirs) in enumerate(zip(native.infos, sync.infos)):
        assert same(mine, theirs), f"infos differ {where}, sub-env {i}"
    if hasattr(native, "rewards"):
        assert np.array_equal(native.rewards, sync.rewards), (where, native.rewards, sync.rewards)
        assert np.array_equal(native.terminated, sync.terminated), where
        assert np.array_equal(native.truncated, sync.truncated), where


def make_pair(env_id: str, reward: RewardFunction, autoreset: bool) -> tuple[Any, Any, Any]:
    kw, actions = SETUPS[env_id]()
    kw |= {"lookback": LOOKBACK, "episode_length": LENGTH, "reward": reward}
    kw["sampler"] = SequentialStart(start=2, stride=11)  # autoresets: each lane's next window
    vector_kwargs = {"autoreset": autoreset}
    native = sekai.make_vec(env_id, N, vector_kwargs=vector_kwargs, **kw)
    sync = sekai.make_vec(env_id, N, vectorization_mode="sync", vector_kwargs=vector_kwargs, **kw)
    assert type(native).__name__ != "SyncVecEnv" and type(sync).__name__ == "SyncVecEnv"
    return native, sync, actions


def first_decisions(round_: int) -> list[dict[str, int]]:
    """Different first decisions per sub-env (and per round)."""
    return [{"start": LOOKBACK + 3 + 17 * k + 29 * round_} for k in range(N)]


@pytest.mark.filterwarnings("ignore::sekai.WipeOutWarning")
@pytest.mark.parametrize("reward", list(REWARDS))
@pytest.mark.parametrize("env_id", list(SETUPS))
def test_autoreset_native_equals_sync_across_staggered_partial_resets(
    env_id: str, reward: str
) -> None:
    """Catches ``reset(mask)`` resetting every sub-env's reward state on a partial autoreset
    (the others' drawdown peak / Sharpe moments lost), resetting none (a wiped-out sub-env
    starting its next episode at drawdown 1), or the mask misaligned with the sub-envs."""
    native, sync, actions = make_pair(env_id, REWARDS[reward](), autoreset=True)
    options = first_decisions(0)
    check_same(native.reset(seed=0, options=options), sync.reset(seed=0, options=options), "reset")
    partial = 0
    episodes = np.zeros(N, int)
    for step in range(1, 61):
        action = actions(step)
        a, b = native.step(action), sync.step(action)
        check_same(a, b, f"at step {step}")
        partial += 0 < a.dones.sum() < N
        episodes += a.dones
    assert partial >= 10  # resets of some sub-envs while others carried on, many times
    assert len(set(episodes.tolist())) == N  # every sub-env ended a different number of times


@pytest.mark.filterwarnings("ignore::sekai.WipeOutWarning")
@pytest.mark.parametrize("reward", list(REWARDS))
@pytest.mark.parametrize("env_id", list(SETUPS))
def test_frozen_native_equals_sync_with_staggered_ends(env_id: str, reward: str) -> None:
    """``autoreset=False``: sub-envs finish at different steps and freeze (reward 0) until the
    next reset, which starts every sub-env from a different fixed start. Catches the reward
    state not reset by a full ``reset()`` (the last round's moments and peaks, including what a
    frozen sub-env's clamped steps fed them, leaking into the next round) and rewards paid to
    frozen sub-envs."""
    native, sync, actions = make_pair(env_id, REWARDS[reward](), autoreset=False)
    step = 0
    staggered = 0
    for round_ in range(5):
        options = first_decisions(round_)
        a, b = native.reset(seed=round_, options=options), sync.reset(seed=round_, options=options)
        check_same(a, b, f"at reset {round_}")
        done = np.zeros(N, bool)
        while not done.all():
            step += 1
            action = actions(step)
            a, b = native.step(action), sync.step(action)
            check_same(a, b, f"at step {step} (round {round_})")
            assert not a.rewards[done].any()  # frozen sub-envs earn nothing
            staggered += 0 < (a.dones & ~done).sum() < N - done.sum()
            done |= a.dones
    assert staggered >= 5


# -- the reward functions' own masked reset ------------------------------------------------


def sharpe_reference(returns: list[float], eta: float) -> list[float]:
    """Moody & Saffell's differential Sharpe ratio of one sub-env, from the §8 formulas."""
    a = b = 0.0
    out = []
    for r in returns:
        da, db = r - a, r * r - b
        variance = b - a * a
        out.append((b * da - 0.5 * a * db) / variance**1.5 if variance > 1e-12 else 0.0)
        a, b = a + eta * da, b + eta * db
    return out


def drawdown_reference(equities: list[float]) -> list[float]:
    peak, dd, out = 1.0, 0.0, []
    for e in equities:
        peak = max(peak, e)
        new = 1.0 - e / peak if peak > 0 else 1.0
        out.append(max(new - dd, 0.0))
        dd = new
    return out


def outcome(r: np.ndarray, equity: np.ndarray) -> StepOutcome:
    return StepOutcome.from_growth(1.0 + r, equity=equity, turnover=np.zeros(N), cost=np.zeros(N))


def test_differential_sharpe_reset_mask_resets_only_the_masked_sub_envs() -> None:
    """Catches ``reset(mask)`` clearing all sub-envs (or none), resetting only ``A`` or only
    ``B``, and a mask read as indices (``[False, True, ...]`` as rows 0 and 1)."""
    rng = np.random.default_rng(0)
    returns = rng.normal(0.001, 0.02, (12, N))
    reward = DifferentialSharpe(eta=0.1)
    got = [reward(outcome(r, np.ones(N))) for r in returns[:6]]
    mask = np.array([False, True, False, True])
    reward.reset(mask)
    got += [reward(outcome(r, np.ones(N))) for r in returns[6:]]
    got_array = np.array(got)
    for k in range(N):
        if mask[k]:  # a fresh start at step 6: the first value after the reset is 0 again
            expected = sharpe_reference(list(returns[:6, k]), 0.1)
            expected += sharpe_reference(list(returns[6:, k]), 0.1)
            assert got_array[6, k] == 0.0
        else:
            expected = sharpe_reference(list(returns[:, k]), 0.1)
        np.testing.assert_allclose(got_array[:, k], expected, rtol=1e-10, atol=1e-14)
    assert np.all(got_array[7:, mask] != 0.0)  # the restarted sub-envs do not stay at 0
    reward.reset(None)  # everyone
    assert np.array_equal(reward(outcome(returns[0], np.ones(N))), np.zeros(N))


def test_drawdown_and_combined_rewards_forward_the_mask() -> None:
    """A combination passes the mask to each stateful part. Catches a ``_Combination.reset``
    that drops the mask (resetting everything) and a DrawdownPenalty reset of the peak only."""
    equity = np.array([[1.1, 1.2, 1.3, 0.9], [0.9, 1.0, 1.1, 0.5], [1.0, 0.95, 1.2, 0.4]])
    later = np.array([[0.8, 0.9, 1.0, 0.3], [0.7, 1.1, 0.9, 0.2]])
    combined = LogReturn() + 2.0 * DrawdownPenalty()
    for row in equity:
        combined(outcome(np.zeros(N), row))
    mask = np.array([True, False, False, True])
    combined.reset(mask)
    got = np.array([combined(outcome(np.zeros(N), row)) for row in later])
    for k in range(N):
        history = list(later[:, k]) if mask[k] else list(equity[:, k]) + list(later[:, k])
        expected = 2.0 * np.array(drawdown_reference(history)[-2:])  # log return 0: only DD
        np.testing.assert_allclose(got[:, k], expected, rtol=1e-12, atol=1e-15)
