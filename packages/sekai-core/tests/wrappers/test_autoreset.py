"""AutoReset, and the warning of per-episode wrappers built around it."""

from __future__ import annotations

import asyncio
import re
import warnings
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import (
    AutoReset,
    DelayAction,
    DelayObservation,
    FrameStackObservation,
    RecordEpisodeStatistics,
    StickyAction,
    TimeAwareObservation,
    TimeLimit,
)


def test_autoreset_returns_next_episode_first_obs_with_ending_step_flags(toy_env: Any) -> None:
    env = AutoReset(toy_env(length=2))
    env.reset(seed=0)
    env.step(0)
    result = env.step(0)
    assert result.terminated is True and result.truncated is False
    assert result.reward == 1.0
    np.testing.assert_array_equal(result.observation, [0.0, 0.0])
    np.testing.assert_array_equal(result.info["final_observation"], [2.0, -2.0])
    assert result.info["final_info"] == {"t": 2}
    assert result.info["reset_info"] == {"reset": 2}
    assert result.info["t"] == 2
    assert list(result.info) == ["t", "final_observation", "final_info", "reset_info"]


def test_autoreset_resets_inner_env_without_seed_or_options(toy_env: Any) -> None:
    inner = toy_env(length=1)
    env = AutoReset(inner)
    env.reset(seed=3, options={"x": 1})
    env.step(0)
    assert inner.resets[-1] == {"seed": None, "options": None}


def test_autoreset_leaves_info_alone_while_episode_runs(toy_env: Any) -> None:
    env = AutoReset(toy_env(length=3))
    env.reset(seed=0)
    assert env.step(0).info == {"t": 1}


def test_autoreset_also_resets_after_truncation(toy_env: Any) -> None:
    env = AutoReset(TimeLimit(toy_env(length=100), 2))
    env.reset(seed=0)
    env.step(0)
    result = env.step(0)
    assert result.truncated is True
    assert result.info["final_info"]["elapsed_steps"] == 2
    assert env.env.elapsed_steps == 0


def test_autoreset_async_step_also_resets_after_truncation(async_toy_env: Any) -> None:
    env = AutoReset(TimeLimit(async_toy_env(length=100), 2))

    async def run() -> Any:
        await env.async_reset(seed=0)
        await env.async_step(0)
        return await env.async_step(0)

    result = asyncio.run(run())
    assert result.truncated is True
    assert result.info["final_info"]["elapsed_steps"] == 2
    np.testing.assert_array_equal(result.info["final_observation"], [2.0, -2.0])
    np.testing.assert_array_equal(result.observation, [0.0, 0.0])
    assert env.env.elapsed_steps == 0


@pytest.mark.parametrize(
    "build",
    [
        lambda e: TimeLimit(e, 5),
        lambda e: TimeAwareObservation(e, 5),
        lambda e: FrameStackObservation(e, 2),
        lambda e: DelayObservation(e, 1),
        lambda e: DelayAction(e, 1, noop=0),
        lambda e: StickyAction(e, 0.1),
    ],
)
def test_per_episode_wrapper_around_autoreset_warns(build: Any, toy_env: Any) -> None:
    with pytest.warns(UserWarning, match=r"is wrapped around an AutoReset") as record:
        wrapper = build(AutoReset(toy_env()))
    name = type(wrapper).__name__
    assert str(record[0].message) == (
        f"{name} is wrapped around an AutoReset, so it does not see the resets that start new "
        "episodes and carries one episode's state into the next. Make AutoReset the outermost "
        f"wrapper: AutoReset({name}(env, ...))."
    )
    assert record[0].filename == __file__


def test_warning_also_fires_when_autoreset_is_deeper_in_the_stack(toy_env: Any) -> None:
    with pytest.warns(UserWarning, match="TimeLimit is wrapped around an AutoReset"):
        TimeLimit(RecordEpisodeStatistics(AutoReset(toy_env())), 5)


def test_record_episode_statistics_around_autoreset_does_not_warn(toy_env: Any) -> None:
    env = RecordEpisodeStatistics(AutoReset(toy_env(length=2)))
    env.reset(seed=0)
    env.step(0)
    assert env.step(0).info["episode"].episode_length == 2


def test_autoreset_outermost_does_not_warn(toy_env: Any) -> None:
    env = AutoReset(TimeLimit(toy_env(), 5))
    assert [type(layer).__name__ for layer in env] == ["AutoReset", "TimeLimit", "ToyEnv"]


@pytest.mark.parametrize("between", [lambda e: e, RecordEpisodeStatistics])
def test_autoreset_around_an_autoreset_passes_results_through(between: Any, toy_env: Any) -> None:
    # Before: the outer one reset again, so the episode the inner one started was skipped and
    # its first observation reported as the terminal one.
    inner = toy_env(length=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = AutoReset(between(AutoReset(inner)))
    env.reset(seed=0)
    env.step(0)
    result = env.step(0)
    np.testing.assert_array_equal(result.info["final_observation"], [2.0, -2.0])
    np.testing.assert_array_equal(result.observation, [0.0, 0.0])
    assert result.info["final_info"] == {"t": 2}
    assert len(inner.resets) == 2  # the reset(seed=0) and one autoreset

    async def run() -> Any:
        await env.async_step(0)
        return await env.async_step(0)

    result = asyncio.run(run())
    np.testing.assert_array_equal(result.info["final_observation"], [2.0, -2.0])
    assert result.info["final_info"] == {"t": 2} and len(inner.resets) == 3


def test_an_episode_ended_between_two_autoresets_is_reset_by_the_outer_one(
    toy_env: Any,
) -> None:
    # The TimeLimit's truncation never reaches the inner AutoReset: the outer one resets it
    # (passing every done step through left the env truncated on every later step).
    inner = toy_env(length=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TimeLimit warns that it is around an AutoReset
        env = AutoReset(TimeLimit(AutoReset(inner), 3))
    env.reset(seed=0)
    flags = [env.step(0).truncated for _ in range(6)]
    assert flags == [False, False, True, False, False, True]
    assert len(inner.resets) == 3  # the reset(seed=0) and two outer resets


def test_autoreset_rejects_non_env() -> None:
    with pytest.raises(TypeError, match=re.escape("AutoReset expected a sekai.Env, got object")):
        AutoReset(object())  # type: ignore[arg-type]


def test_autoreset_is_exported_top_level() -> None:
    assert sekai.AutoReset is AutoReset


class _NoneInfo(sekai.Env[Any, Any]):
    """An env whose step or reset info is None."""

    observation_space = sekai.spaces.Discrete(2)
    action_space = sekai.spaces.Discrete(2)

    def __init__(self, bad: str) -> None:
        self.bad = bad

    def reset(
        self, *, seed: sekai.SeedLike = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(0, None if self.bad == "reset" else {})  # type: ignore[arg-type]

    def step(self, action: Any) -> sekai.StepResult[Any]:
        info: dict[str, Any] | None = None if self.bad == "step" else {}
        return sekai.StepResult(0, 1.0, True, False, info)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["step", "reset"])
def test_autoreset_names_an_info_that_is_not_a_dict(bad: str) -> None:
    env = AutoReset(_NoneInfo(bad))
    env.reset()
    message = rf"^AutoReset: the env's {bad}\(\) returned info None \(NoneType\); an info must be"
    with pytest.raises(TypeError, match=message):
        env.step(0)
