"""TimeAwareObservation."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.wrappers import TimeAwareObservation, TimeLimit


def test_time_aware_appends_normalised_time_using_inner_time_limit(toy_env: Any) -> None:
    env = TimeAwareObservation(TimeLimit(toy_env(length=100), 4))
    assert env.get_attr("max_episode_steps") == 4
    assert (
        repr(env.observation_space)
        == "Box([-100.0, -100.0, 0.0], [100.0, 100.0, 1.0], (3,), float32)"
    )
    np.testing.assert_array_equal(env.reset(seed=0).observation, [0, 0, 0])
    np.testing.assert_array_equal(env.step(0).observation, [1, -1, 0.25])
    obs = [env.step(0).observation for _ in range(5)]
    assert obs[-1][-1] == 1.0  # min(t / max, 1)
    assert env.reset().observation[-1] == 0.0


def test_time_aware_value_is_t_over_max_at_every_step(toy_env: Any) -> None:
    env = TimeAwareObservation(toy_env(length=100), 10)
    env.reset(seed=0)
    values = [env.step(0).observation[-1] for _ in range(12)]
    expected = [min(t / 10, 1.0) for t in range(1, 13)]
    np.testing.assert_allclose(values, expected, rtol=1e-6)


def test_time_aware_uses_spec_max_episode_steps(toy_env: Any) -> None:
    base = toy_env()
    base.spec = sekai.EnvSpec(id="demo/Toy-v0", max_episode_steps=10)
    env = TimeAwareObservation(base)
    env.reset(seed=0)
    assert env.step(0).observation[-1] == pytest.approx(0.1)


def test_time_aware_unnormalised_counts_steps(toy_env: Any) -> None:
    env = TimeAwareObservation(toy_env(), normalize_time=False)
    assert env.observation_space.high[-1] == np.inf
    env.reset(seed=0)
    env.step(0)
    assert env.step(0).observation[-1] == 2.0


def test_time_aware_integer_box_becomes_float32(toy_env: Any) -> None:
    space = sekai.Box(0, 5, shape=(2,), dtype=np.int64)
    env = TimeAwareObservation(toy_env(observation_space=space), 10)
    assert env.observation_space.dtype == np.float32
    assert env.reset(seed=0).observation.dtype == np.float32


def test_time_aware_dict_gains_key_positionally(toy_env: Any) -> None:
    space = sekai.Dict(a=sekai.Discrete(3))
    env = TimeAwareObservation(toy_env(observation_space=space), 5, True, "clock")
    assert (
        repr(env.observation_space) == "Dict({a: Discrete(3), clock: Box(0.0, 1.0, (1,), float32)})"
    )
    env.reset(seed=0)
    obs = env.step(0).observation
    np.testing.assert_allclose(obs["clock"], [0.2])
    assert obs in env.observation_space


def test_time_aware_errors(toy_env: Any) -> None:
    with pytest.raises(
        ValueError,
        match=r"needs max_episode_steps; pass it explicitly or wrap the env in TimeLimit first\.$",
    ):
        TimeAwareObservation(toy_env())
    with pytest.raises(KeyError, match="time"):
        TimeAwareObservation(toy_env(observation_space=sekai.Dict(time=sekai.Discrete(2))), 5)
    with pytest.raises(
        TypeError,
        match=r"^TimeAwareObservation supports 1-D Box and Dict observation spaces, got Discrete",
    ):
        TimeAwareObservation(toy_env(observation_space=sekai.Discrete(3)), 5)
    masked = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=2)
    with pytest.raises(TypeError, match="supports 1-D Box and Dict"):
        TimeAwareObservation(toy_env(observation_space=masked), 5)


@pytest.mark.parametrize(
    ("steps", "error", "text"),
    [
        (2.5, TypeError, "max_episode_steps must be an int, got float."),
        ("10", TypeError, "max_episode_steps must be an int, got str."),
        (True, TypeError, "max_episode_steps must be an int, got bool."),
        (0, ValueError, "max_episode_steps must be >= 1, got 0."),
    ],
)
def test_time_aware_checks_max_episode_steps_as_time_limit_does(
    toy_env: Any, steps: Any, error: type[Exception], text: str
) -> None:
    for wrapper in (TimeAwareObservation, TimeLimit):
        with pytest.raises(error, match=f"^{re.escape(text)}$"):
            wrapper(toy_env(), steps)


def _times_and_truncations(env: Any, steps: int) -> list[tuple[float, bool]]:
    env.reset(seed=0)
    return [(float(r.observation[-1]), r.truncated) for r in (env.step(0) for _ in range(steps))]


def test_set_attr_changes_the_time_limit_below_and_the_time_follows_it(toy_env: Any) -> None:
    env = TimeAwareObservation(TimeLimit(toy_env(length=100), 4))
    assert not hasattr(env, "max_episode_steps")  # set_attr reaches the TimeLimit
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int, got NoneType\.$"):
        env.set_attr("max_episode_steps", None)
    env.set_attr("max_episode_steps", 2)
    assert env.get_attr("max_episode_steps") == 2
    assert _times_and_truncations(env, 3) == [(0.5, False), (1.0, True), (1.0, True)]
    # A limit given to the wrapper normalises the time, fixed: the episodes still shorten.
    fixed = TimeAwareObservation(TimeLimit(toy_env(length=100), 4), 8)
    fixed.set_attr("max_episode_steps", 2)
    assert _times_and_truncations(fixed, 2) == [(0.125, False), (0.25, True)]


def test_set_attr_on_a_vector_env_shortens_episodes_and_the_time_follows(toy_env: Any) -> None:
    fns = [lambda: TimeAwareObservation(TimeLimit(toy_env(length=100), 200))] * 2
    vec = sekai.SyncVecEnv(fns, autoreset=False)
    with pytest.raises(ValueError, match=r"^max_episode_steps must be >= 1, got 0\.$"):
        vec.set_attr("max_episode_steps", [5, 0])  # every value checked before any change
    assert vec.get_attr("max_episode_steps") == [200, 200]
    vec.set_attr("max_episode_steps", [5, 4])
    assert vec.get_attr("max_episode_steps") == [5, 4]
    vec.reset(seed=0)
    results = [vec.step([0, 0]) for _ in range(5)]
    times = [r.observations[:, -1] for r in results[3:]]
    np.testing.assert_allclose(times, [[0.8, 1.0], [1.0, 1.0]], rtol=1e-6)
    assert [r.truncated.tolist() for r in results[3:]] == [[False, True], [True, True]]
