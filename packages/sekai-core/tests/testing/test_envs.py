import numpy as np
import pytest

import sekai
from sekai.testing.envs import KStepEnv, LineEnv, LineVecEnv


def rollout(env, seed, actions):
    observations = [env.reset(seed=seed).observation.tolist()]
    for action in actions:
        result = env.step(action)
        observations.append((result.observation.tolist(), result.reward, result.terminated))
    return observations


def test_line_env_is_deterministic_given_the_seed():
    actions = [1, 0, 1, 1, 1, 1]
    assert rollout(LineEnv(), 3, actions) == rollout(LineEnv(), 3, actions)


def test_line_env_terminates_with_reward_one_at_the_right_end():
    env = LineEnv(size=3)
    env.reset(options={"start": 1})
    result = env.step(1)
    assert (result.observation.tolist(), result.reward, result.terminated) == ([2.0], 1.0, True)


def test_line_env_steps_cost_and_clip_at_the_left_end():
    env = LineEnv(size=3)
    env.reset(options={"start": 0})
    result = env.step(0)
    assert (result.observation.tolist(), result.reward, result.terminated) == ([0.0], -0.1, False)


def test_line_env_rejects_step_before_reset_and_invalid_actions():
    env = LineEnv()
    with pytest.raises(sekai.ResetRequired):
        env.step(1)
    env.reset(seed=0)
    with pytest.raises(sekai.InvalidAction):
        env.step(2)


@pytest.mark.parametrize("size", [1, 2.5, True])
def test_line_env_rejects_bad_sizes(size):
    with pytest.raises(ValueError, match="size must be an int >= 2"):
        LineEnv(size=size)


def test_line_vec_env_matches_line_env_dynamics():
    vec = LineVecEnv(2, size=4, autoreset=False)
    vec.reset(options=[{"start": 2}, {"start": 0}])
    result = vec.step(np.array([1, 0]))
    assert result.observations.tolist() == [[3.0], [0.0]]
    assert result.rewards.tolist() == [1.0, -0.1]
    assert result.terminated.tolist() == [True, False]


def test_line_vec_env_applies_the_time_limit():
    vec = LineVecEnv(2, size=50, max_episode_steps=2)
    vec.reset(seed=0)
    vec.step(np.array([0, 0]))
    assert vec.step(np.array([0, 0])).truncated.tolist() == [True, True]


def test_line_vec_env_is_deterministic_given_the_seed():
    first = LineVecEnv(3).reset(seed=5).observations
    assert np.array_equal(first, LineVecEnv(3).reset(seed=5).observations)


def test_line_envs_refuse_start_options_they_cannot_use() -> None:
    env = LineEnv(size=3)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"^options must be a dict or None, got list\.$"):
        env.reset(seed=1, options=["start"])
    with pytest.raises(ValueError, match=r"must be an int in 0\.\.2, got 3\.$"):
        env.reset(seed=1, options={"start": 3})
    assert env.reset(options={"start": 2}).observation.tolist() == [2.0]
    vec = LineVecEnv(2, size=3)
    vec.reset(seed=0, options={"start": 0})
    with pytest.raises(ValueError, match=r"in 0\.\.2, got -1\.") as caught:
        vec.reset(seed=1, options=[{"start": 2}, {"start": -1}])
    assert caught.value.__notes__ == ["raised by sub-env 1, reset with reset(options=...)[1]"]
    assert vec.position.tolist() == [2, 0]  # the valid sub-env is reset, as on every backend
    before = vec.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"got 3\.$"):
        vec.reset(seed=2, options={"start": 3})  # refused by every sub-env: nothing is seeded
    assert vec.rng.bit_generator.state == before


def test_a_refused_reset_of_line_env_leaves_its_generator_as_it_was():
    env = LineEnv(size=50)
    env.reset(seed=0)
    before = env.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"got 50\.$"):
        env.reset(seed=1, options={"start": 50})
    assert env.rng.bit_generator.state == before


def test_line_vec_env_leaves_a_frozen_sub_env_where_it_ended():
    vec = LineVecEnv(2, size=50, autoreset=False, max_episode_steps=1)
    vec.reset(options={"start": 10})
    assert vec.step(np.array([0, 1])).truncated.tolist() == [True, True]
    result = vec.step(np.array([1, 0]))  # both frozen: stepped again with their last actions
    assert vec.position.tolist() == [9, 11]
    assert result.observations.tolist() == [[9.0], [11.0]]


def test_kstep_env_refuses_a_step_after_its_last_one():
    env = KStepEnv(2)
    env.reset()
    assert [env.step(0).terminated for _ in range(2)] == [False, True]
    with pytest.raises(sekai.ResetRequired, match="the episode has ended"):
        env.step(0)
    assert env.reset().observation.tolist() == [1.0, 0.0]
    assert (env.resets, env.t) == (2, 0)
