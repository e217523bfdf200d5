"""NormalizeReward, TransformReward and ClipReward."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import RunningMeanStd
from sekai.utils._equal import structurally_equal
from sekai.wrappers import AutoReset, ClipReward, NormalizeReward, TransformReward


def test_normalize_reward_divides_by_std_of_discounted_return(toy_env: Any) -> None:
    rewards = [1.0, 2.0, -1.0, 3.0]
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1]), gamma=0.5)
    assert isinstance(env.return_rms, RunningMeanStd) and env.return_rms.shape == ()
    env.reset(seed=0)
    returns, ret, got = [], 0.0, []
    for r in rewards:
        ret = 0.5 * ret + r
        returns.append(ret)
        got.append(env.step(0).reward)
    expected = rewards[-1] / math.sqrt(np.var(returns) + 1e-8)
    assert got[-1] == pytest.approx(expected)
    assert type(got[-1]) is float


def test_normalize_reward_passes_the_first_reward_unscaled(toy_env: Any) -> None:
    # One return has variance 0: dividing by sqrt(0 + 1e-8) would multiply it by 10,000.
    rewards = [1.0, 2.0, -1.0]
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1]), gamma=0.5)
    env.reset(seed=0)
    assert env.step(0).reward == 1.0
    assert env.step(0).reward == pytest.approx(2.0 / math.sqrt(np.var([1.0, 2.5]) + 1e-8))


def test_normalize_reward_resets_return_on_done(toy_env: Any) -> None:
    env = NormalizeReward(toy_env(length=2), gamma=1.0)
    env.reset(seed=0)
    env.step(0)
    env.step(0)  # done: return restarts
    assert env._return == 0.0


def test_normalize_reward_restarts_the_return_on_a_reset_in_the_middle_of_an_episode(
    toy_env: Any,
) -> None:
    env = NormalizeReward(toy_env(length=10), gamma=0.5)
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)  # the discounted returns: 1, 1.5, 1.75
    env.reset(seed=1)
    env.step(0)  # a new episode's first return: its reward, 1
    assert env.return_rms.count == 4
    assert env.return_rms.mean == pytest.approx(np.mean([1.0, 1.5, 1.75, 1.0]))


def test_normalize_reward_restarts_the_return_after_a_truncation(toy_env: Any) -> None:
    env = NormalizeReward(AutoReset(toy_env(length=2, truncate=True)), gamma=0.99)
    env.reset(seed=0)
    for _ in range(4):
        env.step(0)
    # the discounted returns fed to the statistics: 1, 1.99, then from 0 again: 1, 1.99
    assert env.return_rms.mean == pytest.approx(np.mean([1.0, 1.99, 1.0, 1.99]))


def test_normalize_reward_frozen_stats(toy_env: Any) -> None:
    env = NormalizeReward(toy_env(length=10))
    env.reset(seed=0)
    env.step(0)
    env.update_running_mean = False
    count = env.return_rms.count
    env.step(0)
    assert env.return_rms.count == count


def test_normalize_reward_rejects_bad_gamma(toy_env: Any) -> None:
    with pytest.raises(ValueError, match="gamma must be in"):
        NormalizeReward(toy_env(), gamma=1.5)


def test_transform_reward_applies_func_positionally_or_by_alias(toy_env: Any) -> None:
    for env in (
        TransformReward(toy_env(), lambda r: r * 3),
        TransformReward(toy_env(), fn=lambda r: r * 3),
    ):
        env.reset(seed=0)
        result = env.step(0)
        assert result.reward == 3.0
        assert result.info == {"t": 1}


def test_transform_reward_argument_errors(toy_env: Any) -> None:
    with pytest.raises(TypeError, match=r"TransformReward\(\) missing required argument: 'func'"):
        TransformReward(toy_env())
    with pytest.raises(TypeError, match="got both 'func' and 'fn'"):
        TransformReward(toy_env(), abs, fn=abs)
    with pytest.raises(TypeError, match="must be callable"):
        TransformReward(toy_env(), 3)  # type: ignore[arg-type]


def test_clip_reward_clips_and_returns_float(toy_env: Any) -> None:
    env = ClipReward(toy_env(reward_fn=lambda a, t: [5, -5, 0.25][t - 1]), -1.0, 1.0)
    env.reset(seed=0)
    got = [env.step(0).reward for _ in range(3)]
    assert got == [1.0, -1.0, 0.25]
    assert all(type(r) is float for r in got)


class _NumpyRewards(sekai.Env[Any, int]):
    """Rewards NumPy scalars, as many envs do (ToyEnv converts its rewards to float)."""

    observation_space = sekai.Box(0.0, 1.0, shape=(1,))
    action_space = sekai.Discrete(2)
    rewards = (np.float32(0.5), np.int64(0), np.float64(-3.0))

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.t = 0
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: int) -> sekai.StepResult[Any]:
        self.t += 1
        return sekai.StepResult(np.zeros(1, np.float32), self.rewards[self.t - 1], False, False, {})


def test_clip_reward_returns_a_python_float_for_numpy_rewards() -> None:
    env = ClipReward(_NumpyRewards(), -1.0, 1.0)
    env.reset(seed=0)
    got = [env.step(0).reward for _ in range(3)]
    assert got == [0.5, 0.0, -1.0]
    assert all(type(r) is float for r in got)


def test_clip_reward_none_is_unbounded(toy_env: Any) -> None:
    env = ClipReward(toy_env(reward_fn=lambda a, t: -1e9), None, 0.0)
    env.reset(seed=0)
    assert env.step(0).reward == -1e9


@pytest.mark.parametrize(
    "low, high, text",
    [
        (1, 1, r"\(1\) must be less than max_reward \(1\)"),
        (2.0, 1.0, r"\(2.0\) must be less than max_reward \(1.0\)"),
    ],
)
def test_clip_reward_requires_min_below_max(low: Any, high: Any, text: str, toy_env: Any) -> None:
    with pytest.raises(ValueError, match=rf"^min_reward {text}\.$"):
        ClipReward(toy_env(), low, high)


_REFUSED = (
    r"\. A NaN or infinite value would make the statistics NaN for good, and everything "
    r"normalised with them, so nothing was updated\. Fix the env, or replace or rescale such "
    r"values before normalising, e\.g\. with a "
)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_normalize_reward_refuses_a_non_finite_reward_before_updating(
    toy_env: Any, bad: float
) -> None:
    rewards = [1.0, 2.0, bad, 3.0]
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1]), gamma=0.5)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    before, ret = env.state_dict(), env._return
    with pytest.raises(
        ValueError, match=rf"^NormalizeReward: the reward is {bad}{_REFUSED}TransformReward\.$"
    ):
        env.step(0)
    assert structurally_equal(env.state_dict(), before) and env._return == ret
    assert math.isfinite(env.step(0).reward)  # the statistics are still usable


def test_normalize_reward_names_a_return_that_overflows(toy_env: Any) -> None:
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: 1e308), gamma=1.0)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(
        ValueError,
        match=r"^NormalizeReward: the discounted return is inf \(this step's reward is "
        r"1e\+308\)\. ",
    ):
        env.step(0)


def test_frozen_normalize_reward_passes_a_non_finite_reward_through(toy_env: Any) -> None:
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: math.nan))
    env.update_running_mean = False
    env.reset(seed=0)
    assert math.isnan(env.step(0).reward)
    assert env.return_rms.count == 1e-4


def test_vec_normalize_reward_refuses_a_non_finite_reward_naming_the_sub_env(
    toy_env: Any,
) -> None:
    def make(index: int) -> Any:
        rewards = [1.0, 2.0, math.inf if index == 1 else 1.0, 1.0]
        return lambda: toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1])

    vec = sekai.VecNormalizeReward(sekai.SyncVecEnv([make(0), make(1)]), gamma=0.5)
    actions = np.zeros(2, dtype=np.int64)
    vec.reset(seed=0)
    vec.step(actions)
    vec.step(actions)
    before, returns = vec.state_dict(), vec._returns.copy()
    with pytest.raises(
        ValueError,
        match=rf"^VecNormalizeReward: sub-env 1's reward is inf{_REFUSED}VecTransformReward\.$",
    ):
        vec.step(actions)
    assert structurally_equal(vec.state_dict(), before)
    np.testing.assert_array_equal(vec._returns, returns)
    assert np.isfinite(vec.step(actions).rewards).all()


def test_vec_normalize_reward_names_the_sub_env_of_a_nan_reward_after_another_froze(
    toy_env: Any,
) -> None:
    # Sub-env 0 ends its episode and is frozen (no autoreset); sub-env 1's next reward is NaN.
    ends = functools.partial(toy_env, length=1)
    nan_second = functools.partial(
        toy_env, length=10, reward_fn=lambda a, t: math.nan if t == 2 else 1.0
    )
    vec = sekai.VecNormalizeReward(sekai.SyncVecEnv([ends, nan_second], autoreset=False))
    actions = np.zeros(2, dtype=np.int64)
    vec.reset(seed=0)
    vec.step(actions)
    assert vec.frozen.tolist() == [True, False]
    before = vec.state_dict()
    with pytest.raises(
        ValueError,
        match=rf"^VecNormalizeReward: sub-env 1's reward is nan{_REFUSED}VecTransformReward\.$",
    ):
        vec.step(actions)
    assert structurally_equal(vec.state_dict(), before)


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_normalize_reward_load_state_dict_errors_name_the_wrapper_and_the_part(
    toy_env: Any, vector: bool
) -> None:
    env = (
        sekai.VecNormalizeReward(sekai.SyncVecEnv([toy_env] * 2))
        if vector
        else NormalizeReward(toy_env())
    )
    owner = type(env).__name__
    before = env.state_dict()
    bad = {"return_rms": {"mean": np.zeros(3), "var": np.ones(3), "count": 1.0}}
    with pytest.raises(ValueError) as shape:
        env.load_state_dict(bad)
    assert str(shape.value) == (
        f"{owner}: state['return_rms']['mean'] has shape (3,), expected () (the shape of one "
        "sample)."
    )
    with pytest.raises(KeyError) as missing:
        env.load_state_dict({"obs_rms": {}})
    assert missing.value.args[0] == (
        f"{owner}: state is missing 'return_rms' (state_dict() returns {{'return_rms': ...}}), "
        "got a dict with keys ['obs_rms']."
    )
    assert structurally_equal(env.state_dict(), before)
    saved = {"return_rms": {"mean": np.float64(2.0), "var": np.float64(4.0), "count": 3.0}}
    env.load_state_dict(saved)
    assert (float(env.return_rms.mean), env.return_rms.count) == (2.0, 3.0)


_OVERFLOW = (
    r", which would take the statistics' variance past float64's range for good, and everything "
    r"normalised with them, so nothing was updated\. Fix the env, or replace or rescale such "
    r"values before normalising, e\.g\. with a "
)


@pytest.mark.parametrize("before_it", [1, 3], ids=["second-return", "fourth-return"])
def test_normalize_reward_refuses_a_finite_return_that_would_overflow_the_statistics(
    toy_env: Any, before_it: int
) -> None:
    # A return 1e160 from the mean: its squared difference is past float64's range, and the
    # variance would stay inf (every later reward scaled to 0) for good. (From the third
    # return on, the statistics are NumPy scalars, which are updated on Python floats.)
    rewards = [1.0] * before_it + [1e160, 2.0]
    env = NormalizeReward(toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1]), gamma=0.5)
    env.reset(seed=0)
    for _ in range(before_it):
        env.step(0)
    before, ret = env.state_dict(), env._return
    with pytest.raises(
        ValueError,
        match=r"^NormalizeReward: the discounted return is 1e\+160 \(this step's reward is "
        rf"1e\+160\){_OVERFLOW}TransformReward\.$",
    ):
        env.step(0)
    assert structurally_equal(env.state_dict(), before) and env._return == ret
    NormalizeReward(toy_env()).load_state_dict(before)
    assert env.step(0).reward > 0.0  # the statistics are still usable


def test_vec_normalize_reward_refuses_a_finite_return_that_would_overflow_naming_the_sub_env(
    toy_env: Any,
) -> None:
    def make(index: int) -> Any:
        rewards = [1.0, 1e160 if index == 1 else 1.0, 1.0]
        return lambda: toy_env(length=10, reward_fn=lambda a, t: rewards[t - 1])

    vec = sekai.VecNormalizeReward(sekai.SyncVecEnv([make(0), make(1)]), gamma=0.5)
    actions = np.zeros(2, dtype=np.int64)
    vec.reset(seed=0)
    vec.step(actions)
    before, returns = vec.state_dict(), vec._returns.copy()
    with pytest.raises(
        ValueError,
        match=r"^VecNormalizeReward: sub-env 1's discounted return is 1e\+160 \(this step's "
        rf"reward is 1e\+160\){_OVERFLOW}VecTransformReward\.$",
    ):
        vec.step(actions)
    assert structurally_equal(vec.state_dict(), before)
    np.testing.assert_array_equal(vec._returns, returns)
    assert (vec.step(actions).rewards > 0.0).all()


def test_normalize_reward_statistics_follow_the_numpy_rule_bit_for_bit(toy_env: Any) -> None:
    # Scalar statistics are updated on Python floats: the same operations as NumPy's, so the
    # same bits, and the same types (NumPy scalars) as RunningMeanStd's own updates.
    rng = np.random.default_rng(0)
    rewards = (rng.normal(size=600) * rng.choice([1e-8, 1.0, 1e6], size=600)).tolist()
    rewards[100:110] = [0.0, -0.0] * 5
    it = iter(rewards)
    env = NormalizeReward(toy_env(length=37, reward_fn=lambda a, t: next(it)), gamma=0.9)
    reference = RunningMeanStd(shape=())
    env.reset(seed=0)
    ret = 0.0
    for reward in rewards[:500]:
        result = env.step(0)
        ret = ret * 0.9 + reward
        reference.update(np.array([ret]))  # shape (): NumPy's path
        for got, expected in [
            (env.return_rms.mean, reference.mean),
            (env.return_rms.var, reference.var),
        ]:
            assert (
                type(got) is type(expected)
                and np.asarray(got).tobytes() == np.asarray(expected).tobytes()
            )
        assert env.return_rms.count == reference.count
        if result.terminated:
            env.reset()
            ret = 0.0
