"""ContinuousMountainCarEnv: force clipping, the energy penalty and the goal bonus."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import ContinuousMountainCarEnv


def _at(position: float, velocity: float) -> ContinuousMountainCarEnv:
    env = ContinuousMountainCarEnv()
    env.reset(seed=0)
    env.state = np.array([position, velocity])
    return env


def test_energy_penalty_is_a_tenth_of_the_squared_action() -> None:
    result = _at(-0.5, 0.0).step(np.array([0.5], np.float32))
    assert result.reward == pytest.approx(-0.025)
    assert not result.terminated


def test_reaching_the_goal_pays_100_minus_the_penalty() -> None:
    result = _at(0.44, 0.05).step(np.array([1.0], np.float32))
    assert result.terminated and result.reward == pytest.approx(99.9)


def test_force_beyond_the_bounds_is_clipped_but_penalised_as_given() -> None:
    big = _at(-0.5, 0.0).step(np.array([3.0], np.float32))
    edge = _at(-0.5, 0.0).step(np.array([1.0], np.float32))
    np.testing.assert_array_equal(big.observation, edge.observation)
    assert big.reward == pytest.approx(-0.9)  # gymnasium penalises the action it was given


@pytest.mark.parametrize(
    "action", [np.zeros(2, np.float32), np.array([np.nan]), np.float32(1.0), np.array(["x"])]
)
def test_wrong_shape_or_non_finite_action_raises_invalid_action(action: Any) -> None:
    with pytest.raises(sekai.InvalidAction):
        _at(-0.5, 0.0).step(action)


def test_float32_array_actions_step_as_the_general_path_does() -> None:
    # A native float32 array takes the fast path; the same values byte-swapped take box_action.
    fast, general = ContinuousMountainCarEnv(), ContinuousMountainCarEnv()
    rng = np.random.default_rng(0)
    for env in (fast, general):
        env.reset(seed=0)
    for value in rng.uniform(-1.5, 1.5, 3000).astype(np.float32):
        a = fast.step(np.array([value], np.float32))
        b = general.step(np.array([value], ">f4"))
        assert (a.reward, a.terminated) == (b.reward, b.terminated)
        np.testing.assert_array_equal(a.observation, b.observation)
        np.testing.assert_array_equal(fast.state, general.state)
        if a.terminated:
            fast.reset(seed=1)
            general.reset(seed=1)
    with pytest.raises(sekai.InvalidAction):
        fast.step(np.array([np.inf], np.float32))


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(sekai.ResetRequired):
        ContinuousMountainCarEnv().step(np.zeros(1, np.float32))


def test_state_is_float64_after_reset_and_float32_after_a_step() -> None:
    env = ContinuousMountainCarEnv()
    env.reset(seed=0)
    assert env.state is not None and env.state.dtype == np.float64
    env.step(np.zeros(1, np.float32))
    assert env.state.dtype == np.float32


def test_conforms_to_check_env() -> None:
    sekai.testing.assert_env_conforms(ContinuousMountainCarEnv(), strict=True)


def test_an_action_whose_square_overflows_is_refused_before_the_state_changes() -> None:
    env = ContinuousMountainCarEnv()
    env.reset(seed=0)
    before = env.state.copy()
    with pytest.raises(OverflowError, match=r"^MountainCarContinuous action 1e\+200: its energy"):
        env.step(np.array([1e200]))
    np.testing.assert_array_equal(env.state, before)
    assert env.step(np.array([1e100])).reward == -0.1 * 1e200  # large, finite: as gymnasium


@pytest.mark.parametrize("autoreset", [True, False])
def test_the_native_env_steps_the_other_sub_envs_then_raises_as_sync_does(autoreset: bool) -> None:
    # 1e200 overflows sub-envs 0 and 2; sub-env 1 steps (and, with a limit of 1 step, ends).
    actions = np.array([[1e200], [1.0], [-1e200]])
    vecs = {
        mode: sekai.make_vec(
            "classic/MountainCarContinuous-v0",
            3,
            vectorization_mode=mode,
            max_episode_steps=2,
            vector_kwargs={"autoreset": autoreset},
        )
        for mode in ("native", "sync")
    }
    for mode, vec in vecs.items():
        vec.reset(seed=0)
        vec.step(np.zeros((3, 1)))
        states = np.array(vec.get_attr("state"), dtype=np.float64)
        with pytest.raises(OverflowError, match=r"action 1e\+200 \(sub-env 0\)|action 1e\+200:"):
            vec.step(actions)
        after = np.array(vec.get_attr("state"), dtype=np.float64)
        np.testing.assert_array_equal(after[[0, 2]], states[[0, 2]], err_msg=mode)
        single = ContinuousMountainCarEnv()
        single.reset(seed=0)
        single.state = states[1].astype(np.float32)
        expected = single.step(actions[1]).observation
        if autoreset:  # sub-env 1 truncated in the failed step and was reset
            assert after[1, 1] == 0.0, mode
        else:
            np.testing.assert_array_equal(after[1].astype(np.float32), expected, err_msg=mode)
            assert vec.frozen.tolist() == [False, True, False], mode
        result = vec.step(np.zeros((3, 1)))
        assert result.truncated.tolist() == [True, not autoreset, True], mode
        if autoreset:
            assert [info["elapsed_steps"] for info in result.infos] == [2, 1, 2], mode
        vec.close()
