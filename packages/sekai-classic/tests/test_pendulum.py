"""PendulumEnv: Box actions (checks and clipping), reset options and the reward."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import PendulumEnv, PendulumVecEnv


def _fresh(seed: int = 0) -> PendulumEnv:
    env = PendulumEnv()
    env.reset(seed=seed)
    return env


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(sekai.ResetRequired):
        PendulumEnv().step(np.zeros(1, np.float32))


@pytest.mark.parametrize(
    "action",
    [
        np.zeros(2, np.float32),
        np.zeros((1, 1), np.float32),
        np.float32(0.5),
        np.array([np.nan], np.float32),
        np.array([np.inf]),
        np.array(["a"]),
        [[1.0], [2.0, 3.0]],
    ],
)
def test_wrong_shape_or_non_finite_action_raises_invalid_action(action: Any) -> None:
    with pytest.raises(sekai.InvalidAction):
        _fresh().step(action)


def test_finite_out_of_bounds_torque_is_clipped() -> None:
    clipped, bound = _fresh(), _fresh()
    big = clipped.step(np.array([50.0], np.float32))
    edge = bound.step(np.array([2.0], np.float32))
    np.testing.assert_array_equal(big.observation, edge.observation)
    assert big.reward == edge.reward
    assert clipped.last_u == 2.0


def test_float32_array_actions_step_as_the_general_path_does() -> None:
    # A native float32 array takes the fast path; the same values byte-swapped take box_action.
    fast, general = _fresh(), _fresh()
    for value in np.random.default_rng(0).uniform(-3.0, 3.0, 500).astype(np.float32):
        a = fast.step(np.array([value], np.float32))
        b = general.step(np.array([value], ">f4"))
        assert a == b and fast.last_u == general.last_u


def test_a_python_list_action_is_accepted() -> None:
    assert _fresh().step([0.5]).observation.shape == (3,)


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "MountainCarContinuous-v0"])
def test_the_env_and_delay_action_take_the_same_box_actions(env_id: str) -> None:
    env = sekai.make(env_id)
    delayed = sekai.wrappers.DelayAction(sekai.make(env_id), 1)
    env.reset(seed=0)
    delayed.reset(seed=0)
    actions: list[Any] = [[0.5], np.array([9.0]), np.array([3], np.int64), [np.nan], [True]]
    actions += [np.zeros(2), ["1"], np.array([1j]), [2**70], [np.float32(-np.inf)]]
    for action in actions:
        verdicts = []
        for target in (env, delayed):
            try:
                target.step(action)
                verdicts.append(True)
            except sekai.InvalidAction:
                verdicts.append(False)
        assert verdicts[0] == verdicts[1], action


def test_upright_at_rest_without_torque_costs_nothing() -> None:
    env = _fresh()
    env.state = np.array([0.0, 0.0])
    result = env.step(np.zeros(1, np.float32))
    assert result.reward == 0.0
    np.testing.assert_array_equal(result.observation, [1.0, 0.0, 0.0])
    assert not result.terminated and not result.truncated


def test_x_init_and_y_init_bound_the_initial_state() -> None:
    env = PendulumEnv()
    for seed in range(20):
        env.reset(seed=seed, options={"x_init": 0.1, "y_init": 0.2})
        assert env.state is not None
        assert abs(env.state[0]) <= 0.1 and abs(env.state[1]) <= 0.2


@pytest.mark.parametrize("options", [{"x_init": np.nan}, {"y_init": np.inf}, {"x_init": 1e308}])
def test_a_range_that_is_not_finite_names_the_options(options: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"^Pendulum reset options x_init=.* must give a finite"):
        PendulumEnv().reset(seed=0, options=options)


@pytest.mark.parametrize(("name", "value"), [("x_init", -1.0), ("y_init", -0.5)])
@pytest.mark.parametrize("native", [False, True])
def test_a_negative_initial_range_names_the_option(name: str, value: float, native: bool) -> None:
    env: Any = PendulumVecEnv(2) if native else PendulumEnv()
    with pytest.raises(
        ValueError,
        match=rf"^Pendulum reset option {name}={value} must be >= 0: the initial range is "
        rf"\[-{name}, {name}\]\.$",
    ):
        env.reset(seed=0, options={name: value})


@pytest.mark.parametrize("native", [False, True])
def test_a_negative_zero_initial_range_is_no_spread(native: bool) -> None:
    env: Any = PendulumVecEnv(2) if native else PendulumEnv()
    env.reset(seed=0, options={"x_init": -0.0, "y_init": -0.0})
    assert np.all(env.state == 0.0)


def test_state_is_float64() -> None:
    env = _fresh()
    assert env.state is not None and env.state.dtype == np.float64
    env.step(np.ones(1, np.float32))
    assert env.state.dtype == np.float64


def test_spaces_and_metadata() -> None:
    env = PendulumEnv()
    assert repr(env.action_space) == "Box(-2.0, 2.0, (1,), float32)"
    assert repr(env.observation_space) == "Box([-1.0, -1.0, -8.0], [1.0, 1.0, 8.0], (3,), float32)"
    assert env.metadata == {"render_fps": 30}


def test_make_truncates_after_200_steps() -> None:
    env = sekai.make("Pendulum-v1")
    env.reset(seed=0)
    for _ in range(199):
        assert not env.step(np.zeros(1, np.float32)).done
    assert env.step(np.zeros(1, np.float32)).truncated


def test_conforms_to_check_env() -> None:
    sekai.testing.assert_env_conforms(PendulumEnv(), strict=True)
