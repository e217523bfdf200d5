"""ActionRepeat."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sekai.wrappers import ActionRepeat, TimeLimit


def test_action_repeat_sums_rewards_and_reports_repeats(toy_env: Any) -> None:
    inner = toy_env(length=100, reward_fn=lambda a, t: t)
    env = ActionRepeat(TimeLimit(inner, 50), 4)
    env.reset(seed=0)
    result = env.step(2)
    assert result.reward == 10.0 and type(result.reward) is float
    assert result.info == {"t": 4, "elapsed_steps": 4, "action_repeats": 4}
    assert inner.actions == [2, 2, 2, 2]
    assert result.observation.tolist() == [4.0, -4.0]


def test_nested_action_repeat_reports_the_outer_count(toy_env: Any) -> None:
    inner = toy_env(length=100)
    env = ActionRepeat(ActionRepeat(inner, 2), 3)
    env.reset(seed=0)
    result = env.step(0)
    assert result.reward == 6.0
    assert result.info == {"t": 6, "action_repeats": 3}
    assert len(inner.actions) == 6


def test_action_repeat_stops_early_when_episode_ends(toy_env: Any) -> None:
    inner = toy_env(length=3)
    env = ActionRepeat(inner, 5)
    env.reset(seed=0)
    result = env.step(1)
    assert result.terminated is True
    assert result.info["action_repeats"] == 3
    assert inner.actions == [1, 1, 1]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_action_repeat_stops_early_when_episode_is_truncated(path: str, async_toy_env: Any) -> None:
    inner = async_toy_env(length=2, truncate=True)
    env = ActionRepeat(inner, 4)
    if path == "sync":
        env.reset(seed=0)
        result = env.step(1)
    else:
        asyncio.run(env.async_reset(seed=0))
        result = asyncio.run(env.async_step(1))
    assert result.truncated is True and result.terminated is False
    assert result.info == {"t": 2, "action_repeats": 2}
    assert inner.actions == [1, 1]


@pytest.mark.parametrize("bad", [0, -2])
def test_action_repeat_rejects_repeat_below_one(bad: int, toy_env: Any) -> None:
    with pytest.raises(ValueError, match=f"repeat must be >= 1, got {bad}"):
        ActionRepeat(toy_env(), bad)


def test_action_repeat_rejects_non_int(toy_env: Any) -> None:
    with pytest.raises(TypeError, match="repeat must be an int"):
        ActionRepeat(toy_env(), 2.0)  # type: ignore[arg-type]
