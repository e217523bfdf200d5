"""CartPoleEnv: the quickstart's numbers, the env contract and CartPole specifics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import CartPoleEnv


def test_reset_seed_42_gives_the_quickstart_observation() -> None:
    obs = CartPoleEnv().reset(seed=42).observation
    expected = np.array([0.0273956, -0.00611216, 0.03585979, 0.0197368], dtype=np.float32)
    np.testing.assert_allclose(obs, expected, rtol=0, atol=5e-9)
    assert str(obs) == "[ 0.0273956  -0.00611216  0.03585979  0.0197368 ]"


def test_step_zero_after_seed_42_matches_the_spec_repr() -> None:
    env = CartPoleEnv()
    env.reset(seed=42)
    result = env.step(0)
    assert repr(result.observation) == (
        "array([ 0.02727336, -0.20172954,  0.03625453,  0.32351476], dtype=float32)"
    )
    assert (result.reward, result.terminated, result.truncated, result.info) == (
        1.0,
        False,
        False,
        {},
    )


def test_spaces_and_metadata() -> None:
    env = CartPoleEnv()
    assert repr(env.observation_space) == (
        "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)"
    )
    assert repr(env.action_space) == "Discrete(2)"
    assert env.metadata == {"render_fps": 50}
    assert str(env) == "<CartPoleEnv>"


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(sekai.ResetRequired, match=r"reset\(\) must be called before the first"):
        CartPoleEnv().step(0)


@pytest.mark.parametrize("action", [2, -1, True, 1.0, np.array([1]), "1", None, np.float64(0)])
def test_invalid_action_raises_invalid_action(action: Any) -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction) as info:
        env.step(action)
    assert info.value.space == env.action_space
    assert env.step(1).observation.shape == (4,)  # the env is still usable


@pytest.mark.parametrize("action", [np.int64(1), np.int8(1), np.array(1), np.uint8(1)])
def test_numpy_integer_actions_are_accepted(action: Any) -> None:
    reference, env = CartPoleEnv(), CartPoleEnv()
    reference.reset(seed=3)
    env.reset(seed=3)
    np.testing.assert_array_equal(env.step(action).observation, reference.step(1).observation)


def test_pushing_right_accelerates_the_cart_right() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    env.state = np.zeros(4)
    assert env.step(1).observation[1] > 0
    env.state = np.zeros(4)
    assert env.step(0).observation[1] < 0


def test_reset_options_set_the_initial_state_bounds() -> None:
    env = CartPoleEnv()
    obs = env.reset(seed=0, options={"low": 0.3, "high": 0.4}).observation
    assert np.all((obs >= 0.3) & (obs <= 0.4))
    obs = env.reset(seed=0, options={"high": -0.2, "low": -0.2}).observation
    np.testing.assert_array_equal(obs, np.float32(-0.2))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"low": 0.5, "high": 0.1}, "Lower bound"),
        ({"low": "a"}, "could not be converted to a float"),
        ({"high": math.inf}, "must be finite"),
    ],
)
def test_invalid_reset_options_raise_value_error(options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CartPoleEnv().reset(seed=0, options=options)


def test_steps_after_termination_give_zero_reward_like_gymnasium() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    env.state = np.array([2.39, 5.0, 0.0, 0.0])
    first = env.step(1)
    assert (first.terminated, first.reward) == (True, 1.0)
    later = env.step(1)
    assert (later.terminated, later.reward) == (True, 0.0)


def test_sutton_barto_reward_is_zero_per_step_and_minus_one_at_the_end() -> None:
    env = CartPoleEnv(sutton_barto_reward=True)
    env.reset(seed=0)
    assert env.step(0).reward == 0.0
    env.state = np.array([0.0, 0.0, 0.2, 3.0])
    result = env.step(1)
    assert (result.terminated, result.reward) == (True, -1.0)


def test_x_threshold_is_a_python_float_changed_by_set_attr() -> None:
    env = sekai.make("CartPole-v1")
    assert env.get_attr("x_threshold") == 2.4
    assert type(env.get_attr("x_threshold")) is float
    env.set_attr("x_threshold", 0.001)
    env.reset(seed=0)
    env.get_attr("unwrapped").state = np.array([0.01, 0.0, 0.0, 0.0])
    assert env.step(1).terminated


def test_reseeding_replays_and_unseeded_reset_continues_the_stream() -> None:
    env = CartPoleEnv()
    first = env.reset(seed=5).observation
    second = env.reset().observation
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(env.reset(seed=5).observation, first)
    np.testing.assert_array_equal(env.reset().observation, second)


def test_conforms_to_check_env() -> None:
    sekai.testing.assert_env_conforms(CartPoleEnv(), strict=True)
