"""FlattenObservation."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import FlattenObservation


def test_flatten_observation_dict_space_and_values(toy_env: Any) -> None:
    space = sekai.Dict(pos=sekai.Box(-1.0, 1.0, shape=(2,)), k=sekai.Discrete(3))
    obs = {"pos": np.array([0.5, -0.5], dtype=np.float32), "k": 2}
    env = FlattenObservation(toy_env(observation_space=space, obs_fn=lambda e: obs))
    assert repr(env.observation_space) == "Box([-1.0, -1.0, 0.0, 0.0, 0.0], 1.0, (5,), float32)"
    result = env.reset(seed=0)
    np.testing.assert_array_equal(result.observation, [0.5, -0.5, 0.0, 0.0, 1.0])
    assert result.observation.dtype == np.float32
    assert result.info == {"reset": 1}
    assert env.step(0).info == {"t": 1}


def test_flatten_observation_box_ravels(toy_env: Any) -> None:
    space = sekai.Box(0.0, 1.0, shape=(2, 2))
    env = FlattenObservation(
        toy_env(observation_space=space, obs_fn=lambda e: np.eye(2, dtype=np.float32))
    )
    assert env.observation_space.shape == (4,)
    np.testing.assert_array_equal(env.reset(seed=0).observation, [1, 0, 0, 1])


def test_flatten_observation_rejects_sequence_naming_pad_sequence(toy_env: Any) -> None:
    space = sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=3)
    with pytest.raises(TypeError, match="PadSequenceObservation"):
        FlattenObservation(toy_env(observation_space=space))


def test_flatten_observation_rejects_a_sequence_inside_a_dict_naming_pad_sequence(
    toy_env: Any,
) -> None:
    seq = sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=3)
    space = sekai.Dict(a=sekai.Discrete(2), b=sekai.Tuple([seq]))
    with pytest.raises(TypeError) as info:
        FlattenObservation(toy_env(observation_space=space))
    assert str(info.value) == (
        f"FlattenObservation cannot flatten observations of {space!r}: the space is not "
        "flattenable. Pad Sequence observations into fixed-size MaskedBoxes first with "
        "PadSequenceObservation."
    )


class Coin(sekai.Space[str]):
    """A user's space with no flat form (and no Sequence in it)."""

    def __init__(self) -> None:
        super().__init__(None, None)

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return "heads"

    def contains(self, x: Any) -> bool:
        return x in ("heads", "tails")


@pytest.mark.parametrize(
    "wrap",
    [lambda s: s, lambda s: sekai.Dict(coin=s, k=sekai.Discrete(2))],
    ids=["top level", "inside a Dict"],
)
def test_flatten_observation_rejects_a_custom_space_without_advising_pad_sequence(
    wrap: Any, toy_env: Any
) -> None:
    space = wrap(Coin())
    with pytest.raises(TypeError) as info:
        FlattenObservation(toy_env(observation_space=space, obs_fn=lambda e: space.sample()))
    assert str(info.value) == (
        f"FlattenObservation cannot flatten observations of {space!r}: the space is not "
        "flattenable."
    )


def test_a_subclass_observation_override_runs_on_every_path(toy_env: Any) -> None:
    class Scaled(FlattenObservation):
        def observation(self, observation: Any) -> Any:
            return super().observation(observation) * 10

    env = Scaled(toy_env())
    np.testing.assert_array_equal(env.reset(seed=0).observation, [0, 0])
    np.testing.assert_array_equal(env.step(0).observation, [10, -10])

    async def run() -> Any:
        await env.async_reset(seed=0)
        return (await env.async_step(0)).observation

    np.testing.assert_array_equal(asyncio.run(run()), [10, -10])
