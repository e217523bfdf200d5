"""Trading-v0 baselines and evaluate()."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.finance import MarketData, RandomStart, SequentialStart
from sekai.finance.baselines import TWAP, BuyAndHold, ConstantPosition, RandomPolicy, evaluate

EPISODES = 10_240  # ten rounds of 1024 sub-envs


def test_buy_and_hold_reaches_the_exact_kelly_clipped_return():
    # E = episode_length * dt * (mu - sigma^2 / 2) + log(1 - cost) = 0.03 + log(0.999)
    exact = 252 / 252 * (0.05 - 0.02) + np.log(0.999)
    mean, error = evaluate(BuyAndHold(), "Trading-v0", EPISODES, seed=7)
    assert exact == pytest.approx(0.0290, abs=5e-5)
    assert abs(mean - exact) < 4 * error
    assert 0.0015 < error < 0.0025  # sd 0.2 per episode


def test_random_policy_matches_the_measured_bar():
    mean, error = evaluate(RandomPolicy(0), "Trading-v0", 4096, seed=7)
    assert abs(mean - (-0.238)) < 4 * np.hypot(error, 0.001)


def test_evaluate_restarts_a_random_policys_generator_so_reusing_it_gives_the_same_numbers():
    args = ("Trading-v0", 8, 1)
    policy = RandomPolicy(5)
    first = evaluate(policy, *args, num_envs=4, episode_length=10)
    assert evaluate(policy, *args, num_envs=4, episode_length=10) == first
    assert evaluate(RandomPolicy(5), *args, num_envs=4, episode_length=10) == first


def test_a_single_episode_has_a_standard_error_of_zero():
    mean, error = evaluate(BuyAndHold(), "Trading-v0", 1, seed=2, episode_length=5)
    assert error == 0.0 and np.isfinite(mean) and mean != 0.0


def test_flat_scores_exactly_zero():
    assert evaluate(ConstantPosition(1), "Trading-v0", 300, seed=0) == (0.0, 0.0)


def test_evaluate_is_reproducible_and_counts_exact_episodes():
    first = evaluate(BuyAndHold(), "Trading-v0", 50, seed=3, num_envs=16, episode_length=20)
    again = evaluate(BuyAndHold(), "Trading-v0", 50, seed=3, num_envs=16, episode_length=20)
    assert first == again
    other = evaluate(BuyAndHold(), "Trading-v0", 50, seed=4, num_envs=16, episode_length=20)
    assert other != first
    assert all(type(v) is float for v in first)
    # By hand: rounds of 16 reset with seeds 3, 4, 5, 6; of the last round only 2 count.
    vec = sekai.make_vec("Trading-v0", 16, vector_kwargs={"autoreset": False}, episode_length=20)
    scores = []
    for k, take in enumerate([16, 16, 16, 2]):
        vec.reset(seed=3 + k)
        returns = np.zeros(16)
        for _ in range(20):
            returns += vec.step(np.full(16, 2)).rewards
        scores.extend(returns[:take])
    assert len(scores) == 50
    assert first[0] == pytest.approx(np.mean(scores), rel=1e-12)
    assert first[1] == pytest.approx(np.std(scores, ddof=1) / np.sqrt(50), rel=1e-12)


HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 179)))
WINDOWS = {"prices": HISTORY, "episode_length": 21, "lookback": 10}  # 8 windows: rows 10, 31, ...


class FirstDecisions:
    """Buy and hold, recording the first decision row of every sub-env's episode."""

    def __init__(self) -> None:
        self.calls = 0
        self.firsts: list[int] = []

    def __call__(self, observations, vec):
        if self.calls % WINDOWS["episode_length"] == 0:
            self.firsts += [int(t) for t in vec.get_attr("timestamp")]
        self.calls += 1
        return BuyAndHold()(observations, vec)


def _one_sampler(episodes: int, sampler, **source) -> tuple[list[int], tuple[float, float]]:
    # The reference: one single env, one sampler, the episodes one after another.
    fresh = sampler.spawn() if isinstance(sampler, SequentialStart) else sampler
    env = sekai.make("Trading-v0", sampler=fresh, **{**WINDOWS, **source})
    firsts, scores = [], []
    for _ in range(episodes):
        step = env.reset(seed=0)
        firsts.append(int(step.info["timestamp"]))
        total, done = 0.0, False
        while not done:
            step = env.step(2)
            total += step.reward
            done = step.terminated or step.truncated
        scores.append(total)
    return firsts, (np.mean(scores), np.std(scores, ddof=1) / np.sqrt(episodes))


WARMED_UP = {"prices": None, "data": MarketData(HISTORY, warmup=40)}


@pytest.mark.parametrize(
    ("episodes", "sampler", "source"),
    [
        (8, "sequential", {}),  # every window once
        (11, SequentialStart(), {}),  # wraps round to the first windows
        (9, SequentialStart(start=3, stride=30), {}),  # 5 windows: 13, 43, ..., 133, then 13
        (7, SequentialStart(stride=25), WARMED_UP),  # first decisions 40, 65, ..., 140, then 40
    ],
)
@pytest.mark.parametrize("num_envs", [None, 1, 3, 4, 8])
def test_evaluate_splits_a_sequential_samplers_windows_between_the_sub_envs(
    episodes, sampler, source, num_envs
):
    windows, (mean, error) = _one_sampler(episodes, sampler, **source)
    policy = FirstDecisions()
    kwargs = {**WINDOWS, **source, "sampler": sampler}
    score = evaluate(policy, "Trading-v0", episodes, seed=0, num_envs=num_envs, **kwargs)
    assert policy.firsts[:episodes] == windows  # the last round's surplus sub-envs aside
    assert score == pytest.approx((mean, error), rel=1e-12)
    assert error > 0


def test_evaluate_leaves_the_given_sequential_sampler_as_it_was():
    sampler = SequentialStart()
    evaluate(BuyAndHold(), "Trading-v0", 5, num_envs=2, sampler=sampler, **WINDOWS)
    assert (sampler.epoch, sampler._next) == (0, 0)


class Stateful(RandomStart):
    """A user's sampler with per-env state: its spawn() is a copy."""

    def spawn(self) -> Stateful:
        return Stateful()


def test_evaluate_gives_a_sampler_that_spawns_copies_to_the_sub_envs():
    # vector.md tells users to write such samplers; drawing from each sub-env's own generator,
    # the copies play different windows, at the default num_envs as at any other.
    policy = FirstDecisions()
    mean, error = evaluate(policy, "Trading-v0", 16, sampler=Stateful(), **WINDOWS)
    assert np.isfinite(mean) and error > 0
    assert len(set(policy.firsts[:16])) > 1
    assert evaluate(BuyAndHold(), "Trading-v0", 16, sampler=Stateful(), **WINDOWS) == (mean, error)


def test_evaluate_runs_at_most_1024_lanes_by_default():
    # The documented seeding (round k resets with seed + k) depends on the default lane count.
    default = evaluate(TWAP(), "OptimalExecution-v0", 1025, seed=3, n_steps=2)
    explicit = evaluate(TWAP(), "OptimalExecution-v0", 1025, seed=3, n_steps=2, num_envs=1024)
    assert default == explicit


def test_evaluate_validates_its_arguments():
    with pytest.raises(ValueError, match="episodes"):
        evaluate(BuyAndHold(), "Trading-v0", 0)
    with pytest.raises(ValueError, match="seed"):
        evaluate(BuyAndHold(), "Trading-v0", 5, seed=-1)


def test_policies_work_on_a_single_env_and_a_batch():
    env = sekai.make("Trading-v0", positions=(-1.0, 0.0, 0.5, 1.0, 2.0))
    obs = env.reset(seed=0).observation
    assert BuyAndHold()(obs, env) == 3 and ConstantPosition(4)(obs, env) == 4
    vec = sekai.make_vec("Trading-v0", 5)
    batch = vec.reset(seed=0).observations
    assert BuyAndHold()(batch, vec).tolist() == [2] * 5
    random = RandomPolicy(1)(batch, vec)
    assert random.shape == (5,) and set(random.tolist()) <= {0, 1, 2}
    assert 0 <= RandomPolicy(1)(obs, env) < 5
    with pytest.raises(ValueError):
        ConstantPosition(-1)


def test_buy_and_hold_without_a_unit_long_takes_the_largest_position_wherever_it_is():
    env = sekai.make("Trading-v0", positions=(0.5, 0.0, -0.5))
    assert BuyAndHold()(env.reset(seed=0).observation, env) == 0


def test_evaluate_falls_back_to_sync_for_envs_without_native_version():
    # Market-v0 registers no vector_entry_point, so evaluate() must build a SyncVecEnv.
    mean, error = evaluate(RandomPolicy(0), "Market-v0", 4, seed=0)
    assert np.isfinite(mean) and error >= 0


def test_constant_position_index_must_fit_the_env():
    env = sekai.make("Trading-v0", positions=(0.0, 1.0))
    obs = env.reset(seed=0).observation
    assert ConstantPosition(1)(obs, env) == 1
    with pytest.raises(ValueError, match=r"index must be below the env's 2 positions.*got 2"):
        ConstantPosition(2)(obs, env)
