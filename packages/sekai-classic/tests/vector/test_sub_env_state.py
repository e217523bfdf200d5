"""The native envs' get_attr of the single env's state: the same values, types and dtypes as a
SyncVecEnv of single envs gives, sub-env by sub-env."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai

# Per ID: the single env's state attributes (TimeLimit's elapsed_steps included), per-sub-env
# reset options that make every start deterministic (so both backends run the same dynamics)
# and the actions to step with, per step.
_CASES: dict[str, tuple[list[str], list[dict[str, Any]], Any]] = {
    "classic/CartPole-v1": (
        ["state", "steps_beyond_terminated", "elapsed_steps"],
        [{"low": v, "high": v} for v in (0.0, 0.03, -0.04)],
        lambda t: np.array([1, t % 2, 0]),  # sub-envs 0 and 2 topple, sub-env 1 balances
    ),
    "classic/MountainCar-v0": (
        ["state", "elapsed_steps"],
        [{"low": v, "high": v} for v in (-0.5, -0.6, -0.4)],
        lambda t: np.array([2, t % 3, 0]),
    ),
    "classic/MountainCarContinuous-v0": (
        ["state", "elapsed_steps"],
        [{"low": v, "high": v} for v in (-0.5, -0.6, -0.4)],
        # float32 (the space's), float16 and float64 torques: each dtype rounds differently
        lambda t: np.array(
            [[1.0], [-0.5], [0.25]], dtype=(np.float32, np.float16, np.float64)[t % 3]
        ),
    ),
    "classic/Pendulum-v1": (
        ["state", "last_u", "elapsed_steps"],
        [{"x_init": 0.0, "y_init": 0.0}] * 3,
        lambda t: np.array(
            [[1.5], [-2.5], [0.25]], dtype=(np.float32, np.float16, np.float64)[t % 3]
        ),
    ),
    "classic/Acrobot-v1": (
        ["state", "elapsed_steps"],
        [{"low": v, "high": v} for v in (0.0, 0.05, -0.1)],
        lambda t: np.array([2, t % 3, 0]),
    ),
}


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same type (and dtype for arrays and NumPy scalars)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return bool(a == b)


def _check(native: Any, sync: Any, names: list[str], when: str) -> None:
    for name in names:
        mine, theirs = native.get_attr(name), sync.get_attr(name)
        assert len(mine) == len(theirs) == 3, f"{name} {when}"
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert _same(a, b), f"get_attr({name!r}) {when}, sub-env {i}: native {a!r}, sync {b!r}"


@pytest.mark.parametrize("env_id", list(_CASES))
def test_get_attr_of_the_single_envs_state_matches_a_sync_vec_env_exactly(env_id: str) -> None:
    names, options, actions = _CASES[env_id]
    kwargs: dict[str, Any] = {"vector_kwargs": {"autoreset": False}, "max_episode_steps": 12}
    native = sekai.make_vec(env_id, 3, **kwargs)
    sync = sekai.make_vec(env_id, 3, vectorization_mode="sync", **kwargs)
    assert type(native) is not sekai.SyncVecEnv
    with native, sync:
        for episode in range(2):  # the second reset starts the attributes afresh
            native.reset(seed=episode, options=options)
            sync.reset(seed=episode, options=options)
            _check(native, sync, names, f"after reset {episode}")
            for t in range(14):  # past the time limit: every sub-env ends and freezes
                native.step(actions(t))
                sync.step(actions(t))
                _check(native, sync, names, f"after step {t} of episode {episode}")


@pytest.mark.parametrize("env_id", list(_CASES))
def test_autoreset_sub_envs_hold_the_state_types_of_a_fresh_single_env(env_id: str) -> None:
    # Same-step autoresets start random episodes (the backends draw differently): the types
    # and dtypes still follow the single env's, and a terminated CartPole is reset to None.
    names, options, actions = _CASES[env_id]
    native = sekai.make_vec(env_id, 3, max_episode_steps=5)
    sync = sekai.make_vec(env_id, 3, vectorization_mode="sync", max_episode_steps=5)
    with native, sync:
        native.reset(seed=0, options=options)
        sync.reset(seed=0, options=options)
        for t in range(12):
            native.step(actions(t))
            sync.step(actions(t))
            for name in names:
                for a, b in zip(native.get_attr(name), sync.get_attr(name), strict=True):
                    assert type(a) is type(b), f"{name} at step {t}"
                    assert getattr(a, "dtype", None) == getattr(b, "dtype", None), name


def test_elapsed_steps_needs_a_time_limit_as_on_a_sync_vec_env() -> None:
    native = sekai.envs.classic_control.CartPoleVecEnv(2)
    native.reset(seed=0)
    with pytest.raises(AttributeError, match=r"no attribute 'elapsed_steps': it was built without"):
        native.get_attr("elapsed_steps")
    sync = sekai.SyncVecEnv([sekai.envs.classic_control.CartPoleEnv] * 2)
    sync.reset(seed=0)
    with pytest.raises(AttributeError, match="elapsed_steps"):
        sync.get_attr("elapsed_steps")


def test_a_terminated_cartpole_reset_by_a_reset_that_failed_elsewhere_holds_none() -> None:
    # rule 9: the sub-envs with valid options are reset although another one's options raise,
    # so their steps_beyond_terminated starts afresh while the refused one keeps its 0
    names = ["steps_beyond_terminated"]
    kwargs: dict[str, Any] = {"vector_kwargs": {"autoreset": False}}
    native = sekai.make_vec("classic/CartPole-v1", 3, **kwargs)
    sync = sekai.make_vec("classic/CartPole-v1", 3, vectorization_mode="sync", **kwargs)
    with native, sync:
        for vec in (native, sync):
            vec.reset(seed=0)
            for _ in range(40):  # pushed one way, every pole topples
                vec.step(np.array([1, 1, 1]))
        _check(native, sync, names, "after toppling")
        assert native.get_attr("steps_beyond_terminated") == [0, 0, 0]
        options = [None, {"low": 0.1, "high": -0.1}, None]  # sub-env 1's bounds are reversed
        for vec in (native, sync):
            with pytest.raises(ValueError):
                vec.reset(seed=1, options=options)
        _check(native, sync, names, "after the failed reset")
        assert native.get_attr("steps_beyond_terminated") == [None, 0, None]


def test_elapsed_steps_is_a_copy_that_cannot_change_the_time_limit() -> None:
    vec = sekai.make_vec("classic/Pendulum-v1", 2, max_episode_steps=8)
    vec.reset(seed=0)
    for _ in range(5):
        vec.step(np.zeros((2, 1), np.float32))
    counts = vec.elapsed_steps
    counts[:] = 7  # one step short of the limit, were it the env's own counter
    result = vec.step(np.zeros((2, 1), np.float32))
    assert vec.elapsed_steps.tolist() == [6, 6]
    assert not result.truncated.any()
    assert counts.tolist() == [7, 7]
