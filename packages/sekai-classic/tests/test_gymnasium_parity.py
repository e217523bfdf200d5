"""Every classic env against gymnasium 1.x: 50 seeds x 200 random actions, value for value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.envs.classic_control import (
    acrobot,
    cartpole,
    continuous_mountain_car,
    mountain_car,
    pendulum,
)

from sekai.envs.classic_control import (
    AcrobotEnv,
    CartPoleEnv,
    ContinuousMountainCarEnv,
    MountainCarEnv,
    PendulumEnv,
)

PAIRS = [
    pytest.param(cartpole.CartPoleEnv, CartPoleEnv, id="CartPole"),
    pytest.param(pendulum.PendulumEnv, PendulumEnv, id="Pendulum"),
    pytest.param(acrobot.AcrobotEnv, AcrobotEnv, id="Acrobot"),
    pytest.param(mountain_car.MountainCarEnv, MountainCarEnv, id="MountainCar"),
    pytest.param(
        continuous_mountain_car.Continuous_MountainCarEnv,
        ContinuousMountainCarEnv,
        id="MountainCarContinuous",
    ),
]


def _assert_same_state(gym_env: Any, env: Any, where: str) -> None:
    expected = np.asarray(gym_env.state)
    # Internal state to its own precision: float64 where gymnasium keeps float64
    # (Pendulum, Acrobot after a step, CartPole, MountainCar), float32 where it keeps float32.
    np.testing.assert_array_equal(np.asarray(env.state), expected, err_msg=where)
    assert np.asarray(env.state).dtype == expected.dtype, where


def _assert_same_rollouts(
    gym_cls: Any, sekai_cls: Any, seeds: range, steps: int, **attributes: Any
) -> None:
    """Seeded rollouts of both envs (``attributes`` set on both first) with gymnasium's random
    actions: observations, rewards, flags and internal states equal value for value."""
    for seed in seeds:
        gym_env, env = gym_cls(), sekai_cls()
        for name, value in attributes.items():
            setattr(gym_env, name, value)
            setattr(env, name, value)
        gym_obs, _ = gym_env.reset(seed=seed)
        result = env.reset(seed=seed)
        np.testing.assert_array_equal(result.observation, gym_obs)
        assert result.observation.dtype == np.float32
        gym_env.action_space.seed(seed)
        for t in range(steps):
            action = gym_env.action_space.sample()
            if isinstance(action, np.ndarray) and t % 5 == 0:
                action = (action * 2.5).astype(np.float32)  # out of bounds: both clip
            gym_obs, gym_reward, gym_term, gym_trunc, _ = gym_env.step(action)
            step = env.step(action)
            where = f"seed {seed}, step {t}"
            np.testing.assert_array_equal(step.observation, gym_obs, err_msg=where)
            assert step.observation.dtype == np.float32, where
            assert step.reward == float(gym_reward), where
            assert type(step.reward) is float, where
            assert (step.terminated, step.truncated) == (gym_term, gym_trunc), where
            _assert_same_state(gym_env, env, where)
            if gym_term:
                gym_obs, _ = gym_env.reset()  # unseeded: both streams continue
                np.testing.assert_array_equal(env.reset().observation, gym_obs, err_msg=where)


@pytest.mark.parametrize(("gym_cls", "sekai_cls"), PAIRS)
def test_trajectories_match_gymnasium_for_50_seeds(gym_cls: Any, sekai_cls: Any) -> None:
    _assert_same_rollouts(gym_cls, sekai_cls, range(50), 200)


@pytest.mark.parametrize(
    "attributes",
    [
        pytest.param({"book_or_nips": "nips"}, id="nips"),
        pytest.param({"torque_noise_max": 0.5}, id="torque-noise"),
        pytest.param({"torque_noise_max": np.float64(0.3)}, id="numpy-torque-noise"),
        pytest.param({"book_or_nips": "nips", "torque_noise_max": 0.2}, id="nips-and-noise"),
    ],
)
def test_acrobot_with_gymnasiums_other_equations_or_torque_noise_matches_gymnasium(
    attributes: dict[str, Any],
) -> None:
    # Both are gymnasium attributes of the env; the noise is drawn from the env's generator,
    # one uniform(-max, max) draw per step, as gymnasium draws it.
    _assert_same_rollouts(acrobot.AcrobotEnv, AcrobotEnv, range(5), 100, **attributes)


@pytest.mark.parametrize(("gym_cls", "sekai_cls"), PAIRS)
def test_spaces_match_gymnasium(gym_cls: Any, sekai_cls: Any) -> None:
    gym_env, env = gym_cls(), sekai_cls()
    for gym_space, space in (
        (gym_env.observation_space, env.observation_space),
        (gym_env.action_space, env.action_space),
    ):
        assert space.shape == gym_space.shape
        assert space.dtype == gym_space.dtype
        if hasattr(gym_space, "low"):
            np.testing.assert_array_equal(space.low, gym_space.low)
            np.testing.assert_array_equal(space.high, gym_space.high)
        else:
            assert (space.n, space.start) == (gym_space.n, gym_space.start)
    assert env.metadata == {"render_fps": gym_env.metadata["render_fps"]}


@pytest.mark.parametrize(
    ("gym_cls", "sekai_cls", "options"),
    [
        (cartpole.CartPoleEnv, CartPoleEnv, {"low": -0.1, "high": 0.1}),
        (acrobot.AcrobotEnv, AcrobotEnv, {"low": -0.5, "high": 0.2}),
        (mountain_car.MountainCarEnv, MountainCarEnv, {"low": -0.7, "high": 0.5}),
        (
            continuous_mountain_car.Continuous_MountainCarEnv,
            ContinuousMountainCarEnv,
            {"low": -0.7, "high": -0.5},
        ),
        (pendulum.PendulumEnv, PendulumEnv, {"x_init": np.pi / 2, "y_init": 0.5}),
        (pendulum.PendulumEnv, PendulumEnv, {"y_init": 2.0}),
    ],
)
def test_reset_options_match_gymnasium(gym_cls: Any, sekai_cls: Any, options: Any) -> None:
    gym_obs, _ = gym_cls().reset(seed=123, options=options)
    np.testing.assert_array_equal(sekai_cls().reset(seed=123, options=options).observation, gym_obs)


def _float32_state(env: Any) -> None:
    env.state = np.asarray(env.state, dtype=np.float32)  # e.g. restored from an observation


NUMPY_TYPED = [
    (cartpole.CartPoleEnv, CartPoleEnv, _float32_state),
    (mountain_car.MountainCarEnv, MountainCarEnv, _float32_state),
    (acrobot.AcrobotEnv, AcrobotEnv, _float32_state),
    (pendulum.PendulumEnv, PendulumEnv, _float32_state),
    (cartpole.CartPoleEnv, CartPoleEnv, lambda env: setattr(env, "gravity", np.float32(9.8))),
    (cartpole.CartPoleEnv, CartPoleEnv, lambda env: setattr(env, "tau", np.float32(0.02))),
    (
        mountain_car.MountainCarEnv,
        MountainCarEnv,
        lambda env: setattr(env, "force", np.float32(0.001)),
    ),
    (acrobot.AcrobotEnv, AcrobotEnv, lambda env: setattr(env, "LINK_MASS_1", np.float32(1.0))),
    (acrobot.AcrobotEnv, AcrobotEnv, lambda env: setattr(env, "dt", np.float32(0.2))),
]


@pytest.mark.parametrize(("gym_cls", "sekai_cls", "change"), NUMPY_TYPED)
def test_float32_states_and_numpy_constants_compute_as_gymnasium_does(
    gym_cls: Any, sekai_cls: Any, change: Any
) -> None:
    # NumPy computes in float32 where a float32 meets Python floats (NEP 50), and in float64
    # where it meets a NumPy float64 or int64 action: the envs must follow gymnasium there too
    for seed in range(5):
        gym_env, env = gym_cls(), sekai_cls()
        gym_env.reset(seed=seed)
        env.reset(seed=seed)
        gym_env.action_space.seed(seed)
        for t in range(60):
            if t == 3:
                change(gym_env)
                change(env)
            action = gym_env.action_space.sample()
            if t % 2 and isinstance(action, np.integer):
                action = int(action)
            gym_obs, gym_reward, gym_term, _, _ = gym_env.step(action)
            step = env.step(action)
            where = f"seed {seed}, step {t}"
            np.testing.assert_array_equal(step.observation, gym_obs, err_msg=where)
            assert (step.reward, step.terminated) == (float(gym_reward), gym_term), where
            assert type(step.terminated) is bool and type(step.reward) is float, where
            if gym_term:
                break


@pytest.mark.parametrize("state", ["float64", "float32"])
def test_unsigned_int_actions_push_as_their_values_do(state: str) -> None:
    # np.uint8(0) - 1 wraps to 255 in NumPy: action 0 must still push left
    for action in (0, np.uint8(0), np.uint32(0)):
        env = MountainCarEnv(goal_velocity=np.float32(0) if state == "float32" else 0)
        env.reset(seed=0)
        env.state = np.asarray(env.state, dtype=state)
        assert env.step(action).observation[1] < 0


def test_constructor_arguments_match_gymnasium() -> None:
    for gym_env, env in [
        (cartpole.CartPoleEnv(sutton_barto_reward=True), CartPoleEnv(sutton_barto_reward=True)),
        (pendulum.PendulumEnv(g=9.81), PendulumEnv(g=9.81)),
        (mountain_car.MountainCarEnv(goal_velocity=0.01), MountainCarEnv(goal_velocity=0.01)),
        (
            continuous_mountain_car.Continuous_MountainCarEnv(goal_velocity=0.01),
            ContinuousMountainCarEnv(goal_velocity=0.01),
        ),
    ]:
        gym_env.reset(seed=7)
        env.reset(seed=7)
        gym_env.action_space.seed(7)
        for _ in range(300):
            action = gym_env.action_space.sample()
            gym_obs, gym_reward, gym_term, _, _ = gym_env.step(action)
            step = env.step(action)
            np.testing.assert_array_equal(step.observation, gym_obs)
            assert (step.reward, step.terminated) == (float(gym_reward), gym_term)
            if gym_term:
                gym_env.reset()
                env.reset()


def test_random_cartpole_episode_returns_18_like_gymnasium() -> None:
    env = CartPoleEnv()
    env.action_space.seed(0)
    result = env.reset(seed=0)
    total = 0.0
    while not result.done:
        result = env.step(env.action_space.sample())
        total += result.reward
    assert total == 18.0


@pytest.mark.parametrize(
    ("gym_cls", "sekai_cls"),
    [
        (continuous_mountain_car.Continuous_MountainCarEnv, ContinuousMountainCarEnv),
        (pendulum.PendulumEnv, PendulumEnv),
    ],
)
@pytest.mark.parametrize("container", [list, tuple])
def test_box_actions_given_as_python_sequences_match_gymnasium(
    gym_cls: Any, sekai_cls: Any, container: Any
) -> None:
    gym_env, env = gym_cls(), sekai_cls()
    gym_env.reset(seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for t in range(300):
        action = container([float(rng.uniform(-2.5, 2.5))])
        gym_obs, gym_reward, *_ = gym_env.step(action)
        step = env.step(action)
        np.testing.assert_array_equal(step.observation, gym_obs, err_msg=f"step {t}")
        assert step.reward == float(gym_reward), f"step {t}"


@pytest.mark.parametrize(("gym_cls", "sekai_cls"), PAIRS)
def test_a_state_set_as_a_tuple_steps_as_gymnasium_does(gym_cls: Any, sekai_cls: Any) -> None:
    gym_env, env = gym_cls(), sekai_cls()
    gym_env.reset(seed=3)
    env.reset(seed=3)
    state = tuple(float(v) for v in np.asarray(gym_env.state) * 0.5)
    gym_env.unwrapped.state = state
    env.unwrapped.state = state
    action = gym_env.action_space.sample()
    gym_obs, gym_reward, *_ = gym_env.step(action)
    step = env.step(action)
    np.testing.assert_array_equal(step.observation, gym_obs)
    assert step.reward == float(gym_reward)
