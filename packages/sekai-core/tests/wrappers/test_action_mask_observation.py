"""ActionMaskObservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import ActionMaskObservation, FlattenObservation, TimeLimit


def test_non_dict_obs_becomes_observation_and_mask(masked_toy_env: Any) -> None:
    space = sekai.Box(0.0, 1.0, shape=(2,))
    env = ActionMaskObservation(
        masked_toy_env(observation_space=space, obs_fn=lambda e: np.zeros(2, np.float32))
    )
    assert repr(env.observation_space) == (
        "Dict({observation: Box(0.0, 1.0, (2,), float32), action_mask: MultiBinary(3)})"
    )
    obs = env.reset(seed=0).observation
    assert repr(obs) == (
        "{'observation': array([0., 0.], dtype=float32), "
        "'action_mask': array([1, 0, 1], dtype=int8)}"
    )
    assert obs in env.observation_space
    assert env.step(0).observation["action_mask"].tolist() == [1, 0, 1]


def test_dict_obs_gains_key_through_wrappers(masked_toy_env: Any) -> None:
    space = sekai.Dict(a=sekai.Discrete(2))
    env = ActionMaskObservation(TimeLimit(masked_toy_env(observation_space=space), 5), key="legal")
    assert list(env.observation_space.keys()) == ["a", "legal"]
    obs = env.reset(seed=0).observation
    assert list(obs) == ["a", "legal"]  # the space's key order: the mask comes last
    assert obs["legal"].dtype == np.int8


def test_masked_box_obs_is_wrapped_not_merged(masked_toy_env: Any) -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    env = ActionMaskObservation(
        masked_toy_env(observation_space=space, obs_fn=lambda e: space.pack(np.ones((1, 2))))
    )
    assert repr(env.observation_space) == (
        "Dict({observation: MaskedBox(0.0, 1.0, (2,), max_size=3, float32), "
        "action_mask: MultiBinary(3)})"
    )
    obs = env.reset(seed=0).observation
    assert list(obs) == ["observation", "action_mask"]
    assert obs["observation"]["mask"].tolist() == [1, 0, 0]
    assert obs["action_mask"].tolist() == [1, 0, 1]
    assert obs in env.observation_space


def test_mask_is_read_after_every_step(toy_env: Any) -> None:
    class Changing(toy_env):  # type: ignore[misc,valid-type]
        def action_mask(self) -> np.ndarray:
            return np.array([1, self.t % 2, 1], dtype=np.int8)

    env = ActionMaskObservation(Changing())
    assert env.reset(seed=0).observation["action_mask"].tolist() == [1, 0, 1]
    assert env.step(0).observation["action_mask"].tolist() == [1, 1, 1]


def test_box_action_mask_is_flattened(toy_env: Any) -> None:
    class BoxMasked(toy_env):  # type: ignore[misc,valid-type]
        def action_mask(self) -> np.ndarray:
            return np.array([[1], [0]], dtype=np.int8)

    env = ActionMaskObservation(BoxMasked(action_space=sekai.Box(-1.0, 1.0, shape=(2, 2))))
    assert env.reset(seed=0).observation["action_mask"].tolist() == [1, 1, 0, 0]


def test_env_without_action_mask_is_rejected(toy_env: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"^<TimeLimit\(<ToyEnv>\)> has no action_mask\(\) method to read the mask from\.$",
    ):
        ActionMaskObservation(TimeLimit(toy_env(), 5))


def test_existing_key_is_rejected(masked_toy_env: Any) -> None:
    space = sekai.Dict(action_mask=sekai.Discrete(2))
    with pytest.raises(KeyError, match="action_mask"):
        ActionMaskObservation(masked_toy_env(observation_space=space))


def test_action_mask_is_forwarded_through_flatten(masked_toy_env: Any) -> None:
    env = FlattenObservation(masked_toy_env())
    assert env.action_mask().tolist() == [1, 0, 1]


def test_observation_key_on_non_dict_obs_is_rejected(masked_toy_env: Any) -> None:
    with pytest.raises(KeyError) as info:
        ActionMaskObservation(masked_toy_env(), key="observation")
    assert info.value.args[0] == (
        "ActionMaskObservation cannot add key 'observation': the observation is wrapped "
        "under 'observation'. Pass another key."
    )


def test_observation_key_on_dict_obs_without_it_is_allowed(masked_toy_env: Any) -> None:
    space = sekai.Dict(a=sekai.Discrete(2))
    env = ActionMaskObservation(masked_toy_env(observation_space=space), key="observation")
    assert list(env.observation_space.keys()) == ["a", "observation"]
