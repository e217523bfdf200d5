"""FrameStackObservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import batch_space
from sekai.wrappers import FrameStackObservation


def test_frame_stack_reset_padding_repeats_first_obs(toy_env: Any) -> None:
    env = FrameStackObservation(toy_env(), 3)
    assert repr(env.observation_space) == "Box(-100.0, 100.0, (3, 2), float32)"
    obs = env.reset(seed=0).observation
    np.testing.assert_array_equal(obs, [[0, 0], [0, 0], [0, 0]])
    env.step(0)
    obs = env.step(0).observation
    np.testing.assert_array_equal(obs, [[0, 0], [1, -1], [2, -2]])
    assert obs.dtype == np.float32
    np.testing.assert_array_equal(env.step(0).observation[0], [1, -1])


def test_frame_stack_zeros_padding(toy_env: Any) -> None:
    env = FrameStackObservation(
        toy_env(obs_fn=lambda e: np.array([e.t + 5, 1], np.float32)), 3, "zeros"
    )
    np.testing.assert_array_equal(env.reset(seed=0).observation, [[0, 0], [0, 0], [5, 1]])
    np.testing.assert_array_equal(env.step(0).observation, [[0, 0], [5, 1], [6, 1]])


def test_frame_stack_padding_by_keyword_and_reset_clears_stack(toy_env: Any) -> None:
    env = FrameStackObservation(toy_env(), num_stack=2, padding="reset")
    env.reset(seed=0)
    env.step(0)
    np.testing.assert_array_equal(env.reset().observation, [[0, 0], [0, 0]])


def test_frame_stack_returns_fresh_arrays(toy_env: Any) -> None:
    env = FrameStackObservation(toy_env(), 2)
    first = env.reset(seed=0).observation
    copy = first.copy()
    env.step(0)
    np.testing.assert_array_equal(first, copy)


def test_frame_stack_dict_and_discrete_spaces(toy_env: Any) -> None:
    space = sekai.Dict(a=sekai.Box(0.0, 1.0, shape=(2,)), k=sekai.Discrete(3))
    env = FrameStackObservation(toy_env(observation_space=space), 2)
    assert repr(env.observation_space) == (
        "Dict({a: Box(0.0, 1.0, (2, 2), float32), k: MultiDiscrete([3, 3])})"
    )
    obs = env.reset(seed=0).observation
    assert obs["a"].shape == (2, 2) and obs["k"].shape == (2,)
    assert obs in env.observation_space


def test_frame_stack_masked_box_keeps_values_and_mask(toy_env: Any) -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(3,), max_size=4)
    env = FrameStackObservation(toy_env(observation_space=space), 2)
    obs = env.reset(seed=0).observation
    assert obs["values"].shape == (2, 4, 3) and obs["mask"].shape == (2, 4)


def test_frame_stack_info_untouched(toy_env: Any) -> None:
    env = FrameStackObservation(toy_env(), 2)
    assert env.reset(seed=0).info == {"reset": 1}
    assert env.step(0).info == {"t": 1}


@pytest.mark.parametrize("bad", [0, -1])
def test_frame_stack_rejects_num_stack_below_one(bad: int, toy_env: Any) -> None:
    with pytest.raises(
        ValueError, match=rf"^FrameStackObservation: num_stack must be >= 1, got {bad}\.$"
    ):
        FrameStackObservation(toy_env(), bad)


def test_frame_stack_rejects_bad_padding(toy_env: Any) -> None:
    with pytest.raises(ValueError, match=r"^padding must be 'reset' or 'zeros', got 'zero'\.$"):
        FrameStackObservation(toy_env(), 2, padding="zero")


class Unbatchable(sekai.Space[str]):
    """A user's space whose registered batch_space raises ``error``."""

    def __init__(self, error: type[Exception]) -> None:
        super().__init__(None, None)
        self.error = error

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return "heads"

    def contains(self, x: Any) -> bool:
        return x == "heads"


@batch_space.register(Unbatchable)
def _batch_unbatchable(space: Unbatchable, n: int = 1) -> sekai.Space[Any]:
    raise space.error("Unbatchable spaces cannot be batched")


@pytest.mark.parametrize("error", [NotImplementedError, TypeError])
def test_frame_stack_rejects_an_unbatchable_space_with_a_type_error(
    error: type[Exception], toy_env: Any
) -> None:
    env = toy_env(observation_space=Unbatchable(error), obs_fn=lambda e: "heads")
    with pytest.raises(TypeError) as info:
        FrameStackObservation(env, 2)
    assert str(info.value) == (
        "FrameStackObservation cannot stack observations of Unbatchable(): "
        "Unbatchable spaces cannot be batched"
    )
    assert type(info.value.__cause__) is error


def test_frame_stack_keeps_frames_from_an_env_that_reuses_its_buffer(toy_env: Any) -> None:
    buffer = np.zeros(2, np.float32)

    def obs_fn(env: Any) -> np.ndarray:
        buffer[:] = env.t
        return buffer

    env = FrameStackObservation(toy_env(obs_fn=obs_fn), 3)
    # The reset frames stay the first observation while later steps rewrite the buffer.
    seen = [env.reset(seed=0).observation[:, 0].tolist()]
    seen += [env.step(0).observation[:, 0].tolist() for _ in range(3)]
    assert seen == [[0, 0, 0], [0, 0, 1], [0, 1, 2], [1, 2, 3]]


def _stacked(space: Any, frames: list[Any]) -> Any:
    """The rule: each leaf of the last frames, oldest first, on a new leading axis."""
    if isinstance(space, sekai.Dict):
        return {key: _stacked(sub, [f[key] for f in frames]) for key, sub in space.items()}
    return np.stack(frames, axis=0, dtype=space.dtype, casting="unsafe")


def _same_leaves(got: Any, expected: Any) -> None:
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for key in expected:
            _same_leaves(got[key], expected[key])
        return
    assert type(got) is np.ndarray and (got.dtype, got.shape) == (expected.dtype, expected.shape)
    assert got.tobytes() == expected.tobytes()  # bit for bit: NaNs and signed zeros too


_FLOATS = sekai.Box(-np.inf, np.inf, (2, 3), np.float32)
_MIXED = sekai.Dict(a=sekai.Box(-1.0, 1.0, (3,), np.float64), k=sekai.Discrete(4, start=-1))


@pytest.mark.parametrize("padding", ["reset", "zeros"])
@pytest.mark.parametrize("space", [_FLOATS, _MIXED], ids=["box", "dict"])
def test_frame_stack_observations_are_the_last_frames_stacked_bit_for_bit(
    toy_env: Any, space: Any, padding: str
) -> None:
    edge = [np.nan, -0.0, 0.0, np.inf, -np.inf, 3.4e38, 1e-45]
    rng = np.random.default_rng(0)
    seen: list[Any] = []

    def with_edges(obs: Any) -> Any:
        if isinstance(obs, dict):
            return {key: with_edges(leaf) for key, leaf in obs.items()}
        if obs.dtype.kind != "f":
            return obs
        return rng.choice(np.array(edge, obs.dtype), size=obs.shape)

    def obs_fn(env: Any) -> Any:
        space.seed(int(rng.integers(2**31)))
        obs = space.sample()
        seen.append(with_edges(obs) if env.t % 3 == 1 else obs)  # edge values, some steps
        return seen[-1]

    env = FrameStackObservation(toy_env(observation_space=space, obs_fn=obs_fn), 4, padding)
    zero = sekai.spaces.zero_sample(space)

    def reset_frames() -> list[Any]:
        return [seen[-1]] * 4 if padding == "reset" else [zero] * 3 + [seen[-1]]

    observation = env.reset(seed=0).observation
    frames = reset_frames()
    for _ in range(300):
        _same_leaves(observation, _stacked(space, frames))
        result = env.step(0)
        frames, observation = [*frames[1:], seen[-1]], result.observation
        if result.terminated:
            _same_leaves(observation, _stacked(space, frames))
            observation, frames = env.reset().observation, reset_frames()
