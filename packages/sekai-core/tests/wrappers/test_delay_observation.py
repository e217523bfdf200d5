"""DelayObservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import DelayObservation


def _obs(env: Any) -> np.ndarray:
    return np.array([env.t + 1, 7], dtype=np.float32)


def test_delay_observation_zero_padding_then_delayed(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 2)
    assert env.observation_space == env.env.observation_space
    np.testing.assert_array_equal(env.reset(seed=0).observation, [0, 0])
    np.testing.assert_array_equal(env.step(0).observation, [0, 0])
    np.testing.assert_array_equal(env.step(0).observation, [1, 7])
    np.testing.assert_array_equal(env.step(0).observation, [2, 7])


def test_delay_one_returns_reset_obs_on_first_step(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 1)
    np.testing.assert_array_equal(env.reset(seed=0).observation, [0, 0])
    np.testing.assert_array_equal(env.step(0).observation, [1, 7])


def test_delay_observation_reset_padding_uses_first_obs(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 2, padding="reset")
    np.testing.assert_array_equal(env.reset(seed=0).observation, [1, 7])
    np.testing.assert_array_equal(env.step(0).observation, [1, 7])
    np.testing.assert_array_equal(env.step(0).observation, [1, 7])
    np.testing.assert_array_equal(env.step(0).observation, [2, 7])


def test_delay_observation_reset_padding_is_a_fresh_copy_each_time(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 3, padding="reset")
    first = env.reset(seed=0).observation
    first *= 0.0  # the caller's to modify: the padding to come is unchanged
    padded = [env.step(0).observation for _ in range(2)]
    assert [p.tolist() for p in padded] == [[1.0, 7.0], [1.0, 7.0]]
    assert padded[0] is not padded[1]
    np.testing.assert_array_equal(env.step(0).observation, [1, 7])  # the reset's own, delayed


def test_delay_observation_clears_queue_on_reset(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 1)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    np.testing.assert_array_equal(env.reset().observation, [0, 0])


def test_delay_zero_passes_through(toy_env: Any) -> None:
    env = DelayObservation(toy_env(obs_fn=_obs), 0)
    np.testing.assert_array_equal(env.reset(seed=0).observation, [1, 7])


def test_delay_observation_zero_padding_for_dict_space(toy_env: Any) -> None:
    space = sekai.Dict(a=sekai.Box(1.0, 2.0, shape=(2,)), k=sekai.Discrete(3, start=-1))
    env = DelayObservation(toy_env(observation_space=space), 1)
    obs = env.reset(seed=0).observation
    np.testing.assert_array_equal(obs["a"], [1.0, 1.0])
    assert obs["k"] == -1


def test_delay_observation_rejects_negative_delay_and_bad_padding(toy_env: Any) -> None:
    with pytest.raises(ValueError, match="delay must be >= 0, got -1"):
        DelayObservation(toy_env(), -1)
    with pytest.raises(ValueError, match=r"^padding must be 'zeros' or 'reset', got 'same'\.$"):
        DelayObservation(toy_env(), 1, "same")


def test_delay_observation_keeps_observations_from_an_env_that_reuses_its_buffer(
    toy_env: Any,
) -> None:
    buffer = np.zeros(2, np.float32)

    def obs_fn(env: Any) -> np.ndarray:
        buffer[:] = env.t + 1
        return buffer

    env = DelayObservation(toy_env(obs_fn=obs_fn), 2, padding="reset")
    # The padding is the episode's first observation, not what the buffer holds later.
    seen = [env.reset(seed=0).observation.tolist()]
    seen += [env.step(0).observation.tolist() for _ in range(3)]
    assert seen == [[1, 1], [1, 1], [1, 1], [2, 2]]
