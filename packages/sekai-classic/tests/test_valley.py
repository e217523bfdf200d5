"""ValleyEnv: the start both mountain cars share."""

from __future__ import annotations

import numpy as np

from sekai.envs.classic_control import ContinuousMountainCarEnv, MountainCarEnv


def test_both_mountain_cars_start_at_rest_at_the_same_seeded_position() -> None:
    options = {"low": -0.5, "high": -0.45}
    discrete = MountainCarEnv().reset(seed=7, options=options)
    continuous = ContinuousMountainCarEnv().reset(seed=7, options=options)
    np.testing.assert_array_equal(discrete.observation, continuous.observation)
    assert discrete.observation.dtype == np.float32
    assert -0.5 <= discrete.observation[0] <= -0.45
    assert discrete.observation[1] == 0.0


def test_the_valley_differs_only_in_the_goal_position() -> None:
    discrete, continuous = MountainCarEnv(goal_velocity=0.01), ContinuousMountainCarEnv()
    for name in ("min_position", "max_position", "max_speed"):
        assert getattr(discrete, name) == getattr(continuous, name)
    assert (discrete.goal_position, continuous.goal_position) == (0.5, 0.45)
    assert (discrete.goal_velocity, continuous.goal_velocity) == (0.01, 0)
    assert discrete.metadata == continuous.metadata == {"render_fps": 30}
