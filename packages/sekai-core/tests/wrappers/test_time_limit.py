"""TimeLimit and OrderEnforcing."""

from __future__ import annotations

from typing import Any

import pytest

import sekai
from sekai.wrappers import OrderEnforcing, TimeLimit


def test_time_limit_truncates_at_max_and_reports_elapsed_steps(toy_env: Any) -> None:
    env = TimeLimit(toy_env(length=100), 3)
    env.reset(seed=0)
    results = [env.step(0) for _ in range(3)]
    assert [r.truncated for r in results] == [False, False, True]
    assert [r.info["elapsed_steps"] for r in results] == [1, 2, 3]
    assert env.elapsed_steps == 3


def test_time_limit_keeps_counting_past_limit_and_resets_count(toy_env: Any) -> None:
    env = TimeLimit(toy_env(length=100), 1)
    env.reset(seed=0)
    env.step(0)
    assert env.step(0).info["elapsed_steps"] == 2
    env.reset()
    assert env.elapsed_steps == 0


def test_time_limit_keeps_inner_truncation(toy_env: Any) -> None:
    env = TimeLimit(toy_env(length=1, truncate=True), 10)
    env.reset(seed=0)
    assert env.step(0).truncated is True


@pytest.mark.parametrize("bad", [0, -1])
def test_time_limit_rejects_max_below_one(bad: int, toy_env: Any) -> None:
    with pytest.raises(ValueError, match=f"max_episode_steps must be >= 1, got {bad}."):
        TimeLimit(toy_env(), bad)


def test_time_limit_str(toy_env: Any) -> None:
    assert str(TimeLimit(toy_env(), 2)) == "<TimeLimit(<ToyEnv>)>"


def test_order_enforcing_raises_before_first_reset(toy_env: Any) -> None:
    env = OrderEnforcing(toy_env())
    assert env.has_reset is False
    with pytest.raises(sekai.ResetRequired, match=r"reset\(\) must be called before"):
        env.step(0)
    env.reset(seed=0)
    assert env.has_reset is True
    assert env.step(0).reward == 1.0
