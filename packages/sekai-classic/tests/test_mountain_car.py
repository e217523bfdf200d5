"""MountainCarEnv: the goal, the left wall and the actions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import MountainCarEnv


def _at(position: float, velocity: float, goal_velocity: float = 0) -> MountainCarEnv:
    env = MountainCarEnv(goal_velocity=goal_velocity)
    env.reset(seed=0)
    env.state = np.array([position, velocity])
    return env


def test_reaching_the_flag_terminates() -> None:
    result = _at(0.49, 0.05).step(2)
    assert result.terminated and result.reward == -1.0
    assert not _at(-0.5, 0.0).step(2).terminated


def test_goal_velocity_is_required_at_the_flag() -> None:
    assert not _at(0.49, 0.02, goal_velocity=0.05).step(1).terminated


def test_hitting_the_left_wall_stops_the_car() -> None:
    env = _at(-1.19, -0.07)
    result = env.step(0)
    assert result.observation[0] == np.float32(-1.2) and result.observation[1] == 0.0


def test_speed_is_clipped() -> None:
    result = _at(-0.5, 0.07).step(2)
    assert result.observation[1] == np.float32(0.07)


def test_initial_velocity_is_zero_and_position_within_options() -> None:
    obs = MountainCarEnv().reset(seed=1, options={"low": -0.3, "high": -0.2}).observation
    assert -0.3 <= obs[0] <= -0.2 and obs[1] == 0.0


@pytest.mark.parametrize("action", [3, -1, 2.0, np.array([1]), None])
def test_invalid_action_raises_invalid_action(action: Any) -> None:
    with pytest.raises(sekai.InvalidAction):
        _at(-0.5, 0.0).step(action)


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(sekai.ResetRequired):
        MountainCarEnv().step(1)


def test_conforms_to_check_env() -> None:
    sekai.testing.assert_env_conforms(MountainCarEnv(), strict=True)
