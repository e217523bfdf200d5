import asyncio

import numpy as np
import pytest

import sekai
from sekai.wrappers.time_limit import TimeLimit


class Walker(sekai.Env):
    def __init__(self, end_at=None, truncate_at=None):
        self.end_at = end_at
        self.truncate_at = truncate_at
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return sekai.ResetResult(0, {})

    def step(self, action):
        self.t += 1
        return sekai.StepResult(
            self.t, 1.0, self.t == self.end_at, self.t == self.truncate_at, {"inner": True}
        )


def test_time_limit_truncates_at_the_limit_and_counts_elapsed_steps():
    env = TimeLimit(Walker(), 3)
    env.reset()
    results = [env.step(0) for _ in range(4)]
    assert [r.truncated for r in results] == [False, False, True, True]
    assert [r.info["elapsed_steps"] for r in results] == [1, 2, 3, 4]
    assert results[0].info["inner"] is True
    assert env.elapsed_steps == 4 and env.max_episode_steps == 3


def test_time_limit_reset_restarts_the_count_on_both_paths():
    env = TimeLimit(Walker(), 2)
    env.reset()
    env.step(0)
    env.reset()
    assert env.elapsed_steps == 0

    async def go():
        await env.async_reset()
        await env.async_step(0)
        return await env.async_step(0)

    result = asyncio.run(go())
    assert result.truncated and result.info["elapsed_steps"] == 2


def test_time_limit_keeps_termination_and_inner_truncation():
    env = TimeLimit(Walker(end_at=1, truncate_at=2), 10)
    env.reset()
    first, second = env.step(0), env.step(0)
    assert (first.terminated, first.truncated) == (True, False)
    assert (second.terminated, second.truncated) == (False, True)


def test_time_limit_accepts_numpy_integers():
    assert TimeLimit(Walker(), np.int64(4)).max_episode_steps == 4


@pytest.mark.parametrize("steps", [1.5, True, "3", None])
def test_time_limit_rejects_non_integer_limits(steps):
    with pytest.raises(TypeError, match="max_episode_steps must be an int"):
        TimeLimit(Walker(), steps)


def test_time_limit_rejects_limits_below_one_with_the_spec_message():
    with pytest.raises(ValueError) as info:
        TimeLimit(Walker(), 0)
    assert str(info.value) == "max_episode_steps must be >= 1, got 0."


def test_time_limit_done_flag_is_a_python_bool():
    env = TimeLimit(Walker(), 1)
    env.reset()
    assert env.step(0).done is True


def test_a_limit_set_later_is_checked_and_applies_to_later_steps():
    env = TimeLimit(Walker(), 5)
    for bad, error in ((None, TypeError), (0, ValueError), (2.0, TypeError)):
        with pytest.raises(error, match=r"^max_episode_steps must be"):
            env.set_attr("max_episode_steps", bad)
    assert env.max_episode_steps == 5  # a refused value leaves the limit as it was
    env.set_attr("max_episode_steps", 2)
    env.reset()
    assert [env.step(0).truncated for _ in range(2)] == [False, True]


def test_a_subclass_overriding_the_limit_is_obeyed():
    class Shorter(TimeLimit):
        @property
        def max_episode_steps(self):
            return 1

    env = Shorter(Walker(), 5)
    env.reset()
    assert env.step(0).truncated


class Scripted(sekai.Env):
    """Random transitions that reuse one info dict, with Python and NumPy flags."""

    def __init__(self, seed):
        self.rng_ = np.random.default_rng(seed)
        self.info = {"b": 0, "a": 0}
        self.last = None

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(np.zeros(2), {})

    def step(self, action):
        self.info["b"], self.info["a"] = action, int(self.rng_.integers(9))
        flags = [
            bool(f) if self.rng_.random() < 0.5 else np.bool_(f) for f in self.rng_.random(2) < 0.1
        ]
        self.last = sekai.StepResult(
            self.rng_.random(2), float(self.rng_.random()), *flags, self.info
        )
        return self.last


def test_time_limit_steps_as_a_plain_count_over_many_episodes_on_both_paths():
    rng = np.random.default_rng(0)
    inner = Scripted(1)
    env = TimeLimit(inner, 7)
    env.reset()
    count, limit = 0, 7
    for step in range(3000):
        if rng.random() < 0.03:
            limit = int(rng.integers(1, 12))
            env.set_attr("max_episode_steps", limit)
        result = env.step(step) if rng.random() < 0.7 else asyncio.run(env.async_step(step))
        count += 1
        sent = inner.last
        assert result.observation is sent.observation and result.reward is sent.reward
        assert result.terminated is sent.terminated
        assert result.truncated is (bool(sent.truncated) or count >= limit)
        assert list(result.info.items()) == [
            ("b", step),
            ("a", sent.info["a"]),
            ("elapsed_steps", count),
        ]
        assert result.info is not sent.info
        assert env.elapsed_steps == count
        if result.done or rng.random() < 0.05:
            env.reset() if rng.random() < 0.5 else asyncio.run(env.async_reset())
            count = 0
