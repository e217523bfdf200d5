"""AcrobotEnv: state precision, termination, actions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import AcrobotEnv


def test_state_is_float32_after_reset_and_float64_after_a_step() -> None:
    env = AcrobotEnv()
    env.reset(seed=0)
    assert env.state is not None and env.state.dtype == np.float32
    env.step(1)
    assert env.state.dtype == np.float64


def test_tip_above_the_line_terminates_with_reward_zero() -> None:
    env = AcrobotEnv()
    env.reset(seed=0)
    env.state = np.array([np.pi, 0.0, 0.0, 0.0])  # both links straight up
    result = env.step(1)
    assert result.terminated and result.reward == 0.0
    env.reset(seed=0)
    result = env.step(1)
    assert not result.terminated and result.reward == -1.0


def test_velocities_are_bounded_and_angles_wrapped() -> None:
    env = AcrobotEnv()
    env.reset(seed=0)
    env.state = np.array([3.1, -3.1, 100.0, -100.0])
    env.step(2)
    assert env.state is not None
    assert -np.pi <= env.state[0] <= np.pi and -np.pi <= env.state[1] <= np.pi
    assert abs(env.state[2]) <= 4 * np.pi and abs(env.state[3]) <= 9 * np.pi
    assert abs(env.state[2]) == 4 * np.pi  # 100 rad/s was clipped


@pytest.mark.parametrize("action", [3, -1, 1.5, False, np.array([0])])
def test_invalid_action_raises_invalid_action(action: Any) -> None:
    env = AcrobotEnv()
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction):
        env.step(action)


def test_step_before_reset_raises_reset_required() -> None:
    with pytest.raises(sekai.ResetRequired):
        AcrobotEnv().step(0)


def test_observation_space_matches_the_migration_page() -> None:
    assert repr(AcrobotEnv().observation_space) == (
        "Box([-1.0, -1.0, -1.0, -1.0, -12.566371, -28.274334], "
        "[1.0, 1.0, 1.0, 1.0, 12.566371, 28.274334], (6,), float32)"
    )
    assert AcrobotEnv.metadata == {"render_fps": 15}


def test_conforms_to_check_env() -> None:
    sekai.testing.assert_env_conforms(AcrobotEnv(), strict=True)
