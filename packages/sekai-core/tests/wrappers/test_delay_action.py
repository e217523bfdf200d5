"""DelayAction."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import DelayAction


def test_delay_action_executes_noop_then_delayed_actions(toy_env: Any) -> None:
    inner = toy_env(length=100)
    env = DelayAction(inner, 2, noop=0)
    env.reset(seed=0)
    for a in [1, 2, 1, 2]:
        env.step(a)
    assert inner.actions == [0, 0, 1, 2]
    assert env.pending_actions == [1, 2]


def test_delay_action_clears_queue_on_reset(toy_env: Any) -> None:
    inner = toy_env(length=100)
    env = DelayAction(inner, 1, noop=0)
    env.reset(seed=0)
    env.step(2)
    env.reset()
    assert env.pending_actions == []
    env.step(1)
    assert inner.actions == [0, 0]


def test_delay_action_zero_delay_passes_through(toy_env: Any) -> None:
    inner = toy_env(length=100)
    env = DelayAction(inner, 0, noop=0)
    env.reset(seed=0)
    env.step(2)
    assert inner.actions == [2] and env.pending_actions == []


def test_delay_action_box_noop_defaults_to_zero(toy_env: Any) -> None:
    inner = toy_env(action_space=sekai.Box(1.0, 2.0, shape=(2,)))
    env = DelayAction(inner, 1)
    env.reset(seed=0)
    action = np.array([1.5, 1.5], dtype=np.float32)
    env.step(action)
    action[:] = 2.0  # the queued copy must not change
    env.step(action)
    np.testing.assert_array_equal(inner.actions[0], [1.0, 1.0])
    np.testing.assert_array_equal(inner.actions[1], [1.5, 1.5])


def test_delay_action_requires_noop_for_discrete(toy_env: Any) -> None:
    with pytest.raises(
        ValueError,
        match=r"^DelayAction needs an explicit noop action for Discrete action spaces\.$",
    ):
        DelayAction(toy_env(action_space=sekai.Discrete(2)), 1)


def test_delay_action_rejects_noop_outside_space(toy_env: Any) -> None:
    with pytest.raises(ValueError, match=r"^noop 5 is not in the action space Discrete\(2\)\.$"):
        DelayAction(toy_env(action_space=sekai.Discrete(2)), 1, noop=5)


def test_delay_action_rejects_negative_delay(toy_env: Any) -> None:
    with pytest.raises(ValueError, match="delay must be >= 0, got -1"):
        DelayAction(toy_env(), -1, noop=0)


def test_an_invalid_action_is_refused_when_given_not_when_its_turn_comes(toy_env: Any) -> None:
    env = DelayAction(toy_env(length=100), 1, noop=0)
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction, match=r"Action 7 is not valid for space Discrete"):
        env.step(7)
    assert env.pending_actions == []
    env.step(1)
    assert env.pending_actions == [1]


class _Clipping(sekai.Env[Any, Any]):
    """A Box-action env that clips actions to its bounds, as envs do."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Box(-2.0, 2.0, shape=(1,))

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


def test_a_finite_box_action_beyond_the_bounds_is_queued_as_the_env_would_clip_it() -> None:
    env = DelayAction(_Clipping(), 1)
    env.reset(seed=0)
    env.step(np.array([3.0]))
    assert env.pending_actions[0].tolist() == [3.0]
    env.step([True])  # a bool is the number 1, as Box.contains and the envs take it
    for bad in (
        np.array([np.nan]),
        np.array([1.0, 1.0]),
        ["1.5"],
        np.array([1 + 0j]),
        [2**70],
        [10**400],
    ):
        with pytest.raises(sekai.InvalidAction):
            env.step(bad)
