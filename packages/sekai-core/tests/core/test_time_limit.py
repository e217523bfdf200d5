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
