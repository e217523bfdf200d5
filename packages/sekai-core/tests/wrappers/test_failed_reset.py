"""A reset that raises leaves a wrapper's episode state as it was (core.md §14 rule 9: every
backend leaves its sub-envs in the state the failure left them): the wrappers change their
own state only after the wrapped env's reset succeeded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import DelayAction, NormalizeReward, TimeLimit


def _failing(toy_env: Any) -> Any:
    """A ToyEnv whose reset raises for ``options={"fail": True}``, before changing anything."""

    class Failing(toy_env):  # type: ignore[misc, valid-type]
        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            if options and options.get("fail"):
                raise ValueError("bad option")
            return super().reset(seed=seed, options=options)

        async def async_reset(
            self, *, seed: Any = None, options: Any = None
        ) -> sekai.ResetResult[Any]:
            return self.reset(seed=seed, options=options)

    return Failing(action_space=sekai.Box(-1.0, 1.0, (1,)), length=100, reward_fn=_reward)


def _reward(action: Any, t: int) -> float:
    return float(np.asarray(action).sum()) + t


def _fail(env: Any, run_async: bool) -> None:
    with pytest.raises(ValueError, match="bad option"):
        if run_async:
            asyncio.run(env.async_reset(options={"fail": True}))
        else:
            env.reset(options={"fail": True})


@pytest.mark.parametrize("run_async", [False, True])
def test_time_limit_keeps_counting_after_a_failed_reset(toy_env: Any, run_async: bool) -> None:
    env = TimeLimit(_failing(toy_env), 3)
    env.reset(seed=0)
    env.step(np.zeros(1))
    env.step(np.zeros(1))
    _fail(env, run_async)
    assert env.elapsed_steps == 2  # 0 before: the episode had not restarted
    assert env.step(np.zeros(1)).truncated


WRAPPERS: list[Callable[[Any], Any]] = [
    lambda env: NormalizeReward(env, gamma=0.9),
    lambda env: DelayAction(env, 2, noop=np.zeros(1, np.float32)),
]


@pytest.mark.parametrize("wrap", WRAPPERS, ids=["NormalizeReward", "DelayAction"])
@pytest.mark.parametrize("run_async", [False, True])
def test_a_failed_reset_changes_nothing_the_next_steps_see(
    toy_env: Any, wrap: Callable[[Any], Any], run_async: bool
) -> None:
    # A twin that never saw the failed reset steps exactly alike afterwards.
    env, twin = wrap(_failing(toy_env)), wrap(_failing(toy_env))
    actions = [np.full(1, a, np.float32) for a in (0.5, -0.25, 1.0, 0.75, -1.0)]
    for e in (env, twin):
        e.reset(seed=0)
        for a in actions[:3]:
            e.step(a)
    _fail(env, run_async)
    after = [env.step(a) for a in actions[3:]]
    expected = [twin.step(a) for a in actions[3:]]
    assert [r.reward for r in after] == [r.reward for r in expected]
