"""Every built-in wrapper's async path awaits the base env and matches its sync path."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.utils._equal import structurally_equal
from sekai.wrappers import (
    ActionMaskObservation,
    ActionRepeat,
    AutoReset,
    ClipAction,
    ClipReward,
    DelayAction,
    DelayObservation,
    DtypeObservation,
    FilterObservation,
    FlattenObservation,
    FrameStackObservation,
    NormalizeObservation,
    NormalizeReward,
    OrderEnforcing,
    PadSequenceObservation,
    RecordEpisodeStatistics,
    RescaleAction,
    RescaleObservation,
    StickyAction,
    TimeAwareObservation,
    TimeLimit,
    TransformObservation,
    TransformReward,
)

BOX_ACTIONS = {
    "action_space": sekai.Box(-1.0, 1.0, shape=(2,)),
    "reward_fn": lambda a, t: float(np.sum(a)),
}
DICT_OBS = {"observation_space": sekai.Dict(a=sekai.Box(0.0, 1.0, shape=(2,)), b=sekai.Discrete(4))}
SEQ_OBS = {"observation_space": sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=3)}
DISCRETE = [0, 1, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2]
CONTINUOUS = [np.array([0.5 * np.sin(i), 2.0 * np.cos(i)], dtype=np.float32) for i in range(12)]

# name -> (env kwargs, build, actions, masked)
CASES: dict[str, tuple[dict[str, Any], Any, list[Any], bool]] = {
    "TimeLimit": ({}, lambda e: TimeLimit(e, 3), DISCRETE, False),
    "OrderEnforcing": ({}, OrderEnforcing, DISCRETE, False),
    "AutoReset": ({}, AutoReset, DISCRETE, False),
    "RecordEpisodeStatistics": ({}, RecordEpisodeStatistics, DISCRETE, False),
    "ClipAction": (BOX_ACTIONS, ClipAction, CONTINUOUS, False),
    "RescaleAction": (BOX_ACTIONS, lambda e: RescaleAction(e, 0.0, 1.0), CONTINUOUS, False),
    "StickyAction": ({}, lambda e: StickyAction(e, 0.5), DISCRETE, False),
    "ActionRepeat": ({}, lambda e: ActionRepeat(e, 2), DISCRETE, False),
    "DelayAction": ({}, lambda e: DelayAction(e, 2, noop=0), DISCRETE, False),
    "FlattenObservation": (DICT_OBS, FlattenObservation, DISCRETE, False),
    "NormalizeObservation": ({}, NormalizeObservation, DISCRETE, False),
    "FrameStackObservation": ({}, lambda e: FrameStackObservation(e, 3), DISCRETE, False),
    "TransformObservation": (
        {},
        lambda e: TransformObservation(e, lambda o: o * 2),
        DISCRETE,
        False,
    ),
    "RescaleObservation": ({}, lambda e: RescaleObservation(e, 0.0, 1.0), DISCRETE, False),
    "DtypeObservation": ({}, lambda e: DtypeObservation(e, np.float64), DISCRETE, False),
    "FilterObservation": (DICT_OBS, lambda e: FilterObservation(e, ["b"]), DISCRETE, False),
    "TimeAwareObservation": ({}, lambda e: TimeAwareObservation(e, 10), DISCRETE, False),
    "DelayObservation": ({}, lambda e: DelayObservation(e, 2), DISCRETE, False),
    "ActionMaskObservation": ({}, ActionMaskObservation, [0, 2, 2, 0, 0, 2], True),
    "PadSequenceObservation": (SEQ_OBS, PadSequenceObservation, DISCRETE, False),
    "NormalizeReward": ({}, NormalizeReward, DISCRETE, False),
    "TransformReward": ({}, lambda e: TransformReward(e, lambda r: 2 * r + 1), DISCRETE, False),
    "ClipReward": ({}, lambda e: ClipReward(e, 0.0, 0.5), DISCRETE, False),
}


def _summary(result: Any) -> tuple[Any, ...]:
    info = dict(result.info)
    episode = info.pop("episode", None)
    info.pop("final_info", None)
    if episode is not None:
        info["episode"] = (episode.episode_return, episode.episode_length)
    if isinstance(result, sekai.StepResult):
        return (result.observation, result.reward, result.terminated, result.truncated, info)
    return (result.observation, info)


# After this step the runs reset with a new seed, though the episode has not ended: a wrapper
# must restart its own episode state (and reseed its own generator) on both paths.
EARLY_RESET = 1


def _run_sync(env: sekai.Env[Any, Any], actions: list[Any]) -> list[Any]:
    out = [_summary(env.reset(seed=0))]
    for k, action in enumerate(actions):
        result = env.step(action)
        out.append(_summary(result))
        if k == EARLY_RESET:
            out.append(_summary(env.reset(seed=7)))
        elif result.done:
            out.append(_summary(env.reset()))
    return out


async def _run_async(env: sekai.Env[Any, Any], actions: list[Any]) -> list[Any]:
    out = [_summary(await env.async_reset(seed=0))]
    for k, action in enumerate(actions):
        result = await env.async_step(action)
        out.append(_summary(result))
        if k == EARLY_RESET:
            out.append(_summary(await env.async_reset(seed=7)))
        elif result.done:
            out.append(_summary(await env.async_reset()))
    return out


def test_cases_cover_every_builtin_wrapper() -> None:
    assert set(CASES) == set(sekai.wrappers.__all__)
    assert len(CASES) == 23


@pytest.mark.parametrize("name", sorted(CASES))
def test_async_path_awaits_base_env_and_matches_sync_path(
    name: str, toy_env: Any, async_toy_env: Any, masked_toy_env: Any, async_masked_toy_env: Any
) -> None:
    kwargs, build, actions, masked = CASES[name]
    sync_env = build((masked_toy_env if masked else toy_env)(**kwargs))
    async_env = build((async_masked_toy_env if masked else async_toy_env)(**kwargs))
    assert type(sync_env).__name__ == name

    expected = _run_sync(sync_env, actions)
    got = asyncio.run(_run_async(async_env, actions))

    base = async_env.unwrapped
    # Every reset and step reached the base env through its coroutines (its sync methods
    # would have failed inside the running loop).
    assert base.awaits == len(base.resets) + len(base.actions) > len(actions)
    assert structurally_equal(got, expected)
    # The actions the base env executed (delayed, repeated, rescaled...) are the same too.
    assert structurally_equal(base.actions, sync_env.unwrapped.actions)


class PlainAsyncStep(sekai.Env):  # type: ignore[type-arg]
    """Its async_step() is a plain def returning the result (meant as an async def)."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, True, False, {})

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return self.reset(seed=seed, options=options)

    def async_step(self, action: Any) -> Any:  # type: ignore[override]
        return self.step(action)


class PlainAsyncReset(PlainAsyncStep):
    """Its async_reset() is a plain def returning the result (meant as an async def)."""

    def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:  # type: ignore[override]
        return self.reset(seed=seed, options=options)

    async def async_step(self, action: Any) -> Any:
        return self.step(action)


_NOT_AWAITABLE = (
    "{env}.{method}() returned a sekai.{result}, not an awaitable: it must be an async def (sync "
    "code goes in {sync}())."
)


@pytest.mark.parametrize(
    "wrap",
    [TimeLimit, OrderEnforcing, AutoReset, ActionRepeat, RecordEpisodeStatistics],
    ids=lambda wrap: wrap.__name__,
)
@pytest.mark.parametrize("method", ["async_reset", "async_step"])
def test_an_async_method_written_without_async_is_named_by_the_wrapper_above(
    wrap: Any, method: str
) -> None:
    env_class = PlainAsyncReset if method == "async_reset" else PlainAsyncStep
    wrapped = wrap(env_class(), 5) if wrap in (TimeLimit, ActionRepeat) else wrap(env_class())
    expected = _NOT_AWAITABLE.format(
        env=env_class.__name__,
        method=method,
        result="ResetResult" if method == "async_reset" else "StepResult",
        sync=method.removeprefix("async_"),
    )

    async def main() -> None:
        if method == "async_reset":
            await wrapped.async_reset(seed=0)
        else:
            await wrapped.async_reset(seed=0)
            await wrapped.async_step(0)

    with pytest.raises(TypeError) as info:
        asyncio.run(main())
    assert str(info.value) == expected


class ForgotItsReturn(PlainAsyncStep):
    """Its async_step() is a plain def that forgot its return: it returns None."""

    def async_step(self, action: Any) -> Any:  # type: ignore[override]
        self.step(action)


def test_an_async_method_returning_none_is_named_with_none() -> None:
    env = TimeLimit(ForgotItsReturn(), 5)

    async def main() -> None:
        await env.async_reset(seed=0)
        await env.async_step(0)

    with pytest.raises(TypeError) as info:
        asyncio.run(main())
    assert str(info.value) == (
        "ForgotItsReturn.async_step() returned None, not an awaitable: it must be an async def "
        "(sync code goes in step())."
    )


class _Halved(sekai.ObservationWrapper):  # type: ignore[type-arg]
    """A user's observation wrapper: only observation() is written."""

    def observation(self, observation: Any) -> Any:
        return observation / 2


class _Shifted(sekai.RewardWrapper):  # type: ignore[type-arg]
    """A user's reward wrapper: only reward() is written."""

    def reward(self, reward: float) -> float:
        return reward - 1.0


# Every built-in wrapper, and a user's subclass of each transforming base class.
WRAPPERS_AND_SUBCLASSES = {
    **CASES,
    "UserObservationWrapper": ({}, _Halved, DISCRETE, False),
    "UserRewardWrapper": ({}, _Shifted, DISCRETE, False),
}


@pytest.mark.parametrize("path", ["step", "async_step"])
@pytest.mark.parametrize("ending", ["terminated", "truncated"])
@pytest.mark.parametrize("name", sorted(WRAPPERS_AND_SUBCLASSES))
def test_the_step_that_ends_an_episode_keeps_the_base_envs_flags(
    name: str, ending: str, path: str, async_toy_env: Any, async_masked_toy_env: Any
) -> None:
    # The base env ends its episode on its second step, by termination or by truncation; the
    # wrapper hands both flags on as they are, on the sync and the async path.
    kwargs, build, actions, masked = WRAPPERS_AND_SUBCLASSES[name]
    base = (async_masked_toy_env if masked else async_toy_env)(
        **kwargs, length=2, truncate=ending == "truncated"
    )
    env = build(base)
    # ActionRepeat(2) steps the base env twice per step: its first step ends the episode.
    steps = actions[:1] if name == "ActionRepeat" else actions[:2]

    async def run_async() -> list[sekai.StepResult[Any]]:
        await env.async_reset(seed=0)
        return [await env.async_step(action) for action in steps]

    if path == "step":
        env.reset(seed=0)
        results = [env.step(action) for action in steps]
    else:
        results = asyncio.run(run_async())
    ended = (ending == "terminated", ending == "truncated")
    expected = [(False, False)] * (len(steps) - 1) + [ended]
    assert [(result.terminated, result.truncated) for result in results] == expected
