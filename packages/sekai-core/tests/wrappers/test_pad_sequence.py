"""PadSequenceObservation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import FlattenObservation, PadSequenceObservation

FEATURE = sekai.Box(0.0, 1.0, shape=(2,))


def _rows(n: int) -> tuple[np.ndarray, ...]:
    return tuple(np.full(2, (i + 1) / 10, dtype=np.float32) for i in range(n))


def test_pads_top_level_sequence_into_masked_box(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE, max_length=3)
    env = PadSequenceObservation(toy_env(observation_space=space, obs_fn=lambda e: _rows(2)))
    assert repr(env.observation_space) == "MaskedBox(0.0, 1.0, (2,), max_size=3, float32)"
    obs = env.reset(seed=0).observation
    assert obs["mask"].tolist() == [1, 1, 0]
    np.testing.assert_allclose(obs["values"], [[0.1, 0.1], [0.2, 0.2], [0.0, 0.0]])
    assert obs in env.observation_space


def test_explicit_max_length_and_tail_truncation(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE)
    env = PadSequenceObservation(toy_env(observation_space=space, obs_fn=lambda e: _rows(5)), 3)
    obs = env.reset(seed=0).observation
    np.testing.assert_allclose(obs["values"][:, 0], [0.3, 0.4, 0.5])


def test_explicit_max_length_overrides_the_sequences_own(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE, max_length=3)
    env = PadSequenceObservation(toy_env(observation_space=space, obs_fn=lambda e: _rows(3)), 5)
    assert repr(env.observation_space) == "MaskedBox(0.0, 1.0, (2,), max_size=5, float32)"
    assert env.reset(seed=0).observation["mask"].tolist() == [1, 1, 1, 0, 0]


def test_head_truncation(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE)
    env = PadSequenceObservation(
        toy_env(observation_space=space, obs_fn=lambda e: _rows(5)), 2, truncate="head"
    )
    np.testing.assert_allclose(env.reset(seed=0).observation["values"][:, 0], [0.1, 0.2])


def test_error_truncation_raises(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE)
    env = PadSequenceObservation(
        toy_env(observation_space=space, obs_fn=lambda e: _rows(6)), 3, truncate="error"
    )
    with pytest.raises(ValueError, match=r"^Sequence of length 6 exceeds max_length 3\.$"):
        env.reset(seed=0)


def test_error_truncation_accepts_a_sequence_of_exactly_max_length(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE, max_length=3)
    env = PadSequenceObservation(
        toy_env(observation_space=space, obs_fn=lambda e: _rows(3)), truncate="error"
    )
    obs = env.reset(seed=0).observation
    assert obs["mask"].tolist() == [1, 1, 1]
    np.testing.assert_allclose(obs["values"][:, 0], [0.1, 0.2, 0.3])


def test_stacked_and_empty_sequences(toy_env: Any) -> None:
    space = sekai.Sequence(FEATURE, max_length=2, stack=True)
    values = iter([np.zeros((0, 2), np.float32), np.ones((1, 2), np.float32)])
    env = PadSequenceObservation(toy_env(observation_space=space, obs_fn=lambda e: next(values)))
    assert env.reset(seed=0).observation["mask"].tolist() == [0, 0]
    assert env.step(0).observation["mask"].tolist() == [1, 0]


def test_nested_sequences_in_dict_and_tuple_make_it_flattenable(toy_env: Any) -> None:
    space = sekai.Dict(
        orders=sekai.Sequence(FEATURE, max_length=2),
        other=sekai.Tuple([sekai.Discrete(2), sekai.Sequence(FEATURE, max_length=1)]),
    )
    env = PadSequenceObservation(toy_env(observation_space=space))
    assert repr(env.observation_space) == (
        "Dict({orders: MaskedBox(0.0, 1.0, (2,), max_size=2, float32), other: "
        "Tuple(Discrete(2), MaskedBox(0.0, 1.0, (2,), max_size=1, float32))})"
    )
    obs = env.reset(seed=0).observation
    assert obs in env.observation_space
    flat = FlattenObservation(env)
    assert flat.observation_space.shape == (2 * 2 + 2 + 2 + 2 + 1,)


def test_pads_a_sequence_in_a_dict_next_to_a_box(toy_env: Any) -> None:
    space = sekai.Dict(seq=sekai.Sequence(FEATURE, max_length=2), x=sekai.Box(0.0, 1.0, (1,)))
    x = np.zeros(1, np.float32)
    env = PadSequenceObservation(
        toy_env(observation_space=space, obs_fn=lambda e: {"seq": _rows(1), "x": x})
    )
    assert repr(env.observation_space) == (
        "Dict({seq: MaskedBox(0.0, 1.0, (2,), max_size=2, float32), "
        "x: Box(0.0, 1.0, (1,), float32)})"
    )
    obs = env.reset(seed=0).observation
    assert obs["seq"]["mask"].tolist() == [1, 0]
    np.testing.assert_allclose(obs["seq"]["values"], [[0.1, 0.1], [0.0, 0.0]])
    np.testing.assert_array_equal(obs["x"], [0.0])
    assert obs in env.observation_space


def test_errors(toy_env: Any) -> None:
    with pytest.raises(TypeError, match=r"^No Sequence in the observation space"):
        PadSequenceObservation(toy_env())
    with pytest.raises(TypeError, match="Sequences of Box elements"):
        PadSequenceObservation(toy_env(observation_space=sekai.Sequence(sekai.Discrete(3))), 2)
    with pytest.raises(
        ValueError,
        match=r"^PadSequenceObservation needs max_length \(the Sequence has no max_length\)\.$",
    ):
        PadSequenceObservation(toy_env(observation_space=sekai.Sequence(FEATURE)))
    seq_env = toy_env(observation_space=sekai.Sequence(FEATURE, max_length=2))
    with pytest.raises(ValueError, match="truncate must be"):
        PadSequenceObservation(seq_env, truncate="middle")
    with pytest.raises(ValueError, match="max_length must be >= 1, got 0"):
        PadSequenceObservation(seq_env, 0)
    with pytest.raises(
        TypeError, match=r"^PadSequenceObservation: max_length must be an int, got float\.$"
    ):
        PadSequenceObservation(seq_env, 2.5)
