"""The native vector envs: bit-exact against the single envs, autoreset, time limits, freezing."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import (
    AcrobotEnv,
    AcrobotVecEnv,
    CartPoleEnv,
    CartPoleVecEnv,
    ContinuousMountainCarEnv,
    ContinuousMountainCarVecEnv,
    MountainCarEnv,
    MountainCarVecEnv,
    PendulumEnv,
    PendulumVecEnv,
)

# (single class, native class, dtype of the single env's state right after reset)
CASES = [
    pytest.param(CartPoleEnv, CartPoleVecEnv, np.float64, id="CartPole"),
    pytest.param(PendulumEnv, PendulumVecEnv, np.float64, id="Pendulum"),
    pytest.param(AcrobotEnv, AcrobotVecEnv, np.float32, id="Acrobot"),
    pytest.param(MountainCarEnv, MountainCarVecEnv, np.float64, id="MountainCar"),
    pytest.param(
        ContinuousMountainCarEnv,
        ContinuousMountainCarVecEnv,
        np.float64,
        id="MountainCarContinuous",
    ),
]


def _run_against_singles(
    single_cls: Any,
    vec_cls: Any,
    reset_dtype: Any,
    action_dtype: Any,
    num_envs: int = 32,
    int_dtype: Any = None,
) -> None:
    """Step the native env and one single env per sub-env, the singles put in the native
    env's (re)set states, and require identical results on every step."""
    vec = vec_cls(num_envs, max_episode_steps=150)
    vec.reset(seed=1)
    singles = [single_cls() for _ in range(num_envs)]

    def sync(i: int) -> None:
        singles[i].reset(seed=0)
        singles[i].state = vec.state[i].astype(reset_dtype)

    for i in range(num_envs):
        sync(i)
    space = vec.batch_action_space
    space.seed(3)
    for t in range(250):
        actions = space.sample()
        if actions.dtype.kind == "f":
            actions = actions.astype(action_dtype)
            if t % 3 == 0:
                actions = actions * 2.5  # finite values out of bounds: clipped by both
        elif int_dtype is not None:
            actions = actions.astype(int_dtype)
        result = vec.step(actions)
        for i in range(num_envs):
            expected = singles[i].step(actions[i])
            obs = result.infos[i].get("final_observation", result.observations[i])
            where = f"step {t}, sub-env {i}"
            np.testing.assert_array_equal(obs, expected.observation, err_msg=where)
            assert result.rewards[i] == expected.reward, where
            assert result.terminated[i] == expected.terminated, where
            if result.dones[i]:
                sync(i)


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_observation_batches_are_row_major(single_cls: Any, vec_cls: Any, reset_dtype: Any) -> None:
    vec = vec_cls(4)
    assert vec.reset(seed=0).observations.flags.c_contiguous
    result = vec.step(vec.batch_action_space.sample())
    assert result.observations.flags.c_contiguous


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_sub_envs_match_the_single_env_bit_for_bit(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    _run_against_singles(single_cls, vec_cls, reset_dtype, np.float32)


@pytest.mark.parametrize("action_dtype", [np.float16, np.float64, np.int64, np.int8])
@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), [CASES[1], CASES[4]])
def test_box_actions_of_other_dtypes_match_the_single_env_bit_for_bit(
    single_cls: Any, vec_cls: Any, reset_dtype: Any, action_dtype: Any
) -> None:
    # The single env computes in the action's dtype as NumPy promotes it (float16 rounds).
    _run_against_singles(single_cls, vec_cls, reset_dtype, action_dtype)


@pytest.mark.skipif(
    np.dtype(np.longdouble) == np.dtype(np.float64), reason="long double is float64 here"
)
def test_mountain_car_continuous_refuses_long_double_actions_before_stepping() -> None:
    vec = ContinuousMountainCarVecEnv(2)
    vec.reset(seed=0)
    before = vec.state.copy()
    with pytest.raises(ValueError, match=r"actions of dtype float128 are not supported; expected"):
        vec.step(np.zeros((2, 1), dtype=np.longdouble))
    np.testing.assert_array_equal(vec.state, before)


@pytest.mark.parametrize("int_dtype", [np.uint8, np.int32])
@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), [CASES[0], CASES[2], CASES[3]])
def test_other_integer_action_dtypes_match_the_single_env_bit_for_bit(
    single_cls: Any, vec_cls: Any, reset_dtype: Any, int_dtype: Any
) -> None:
    _run_against_singles(single_cls, vec_cls, reset_dtype, None, num_envs=8, int_dtype=int_dtype)


# Per env: states on the edges of the dynamics (walls, speed limits, termination bounds) that
# random rollouts from reset states rarely reach, and the actions to hold from each of them.
BOUNDARIES: dict[type, tuple[list[list[float]], list[Any]]] = {
    CartPoleVecEnv: (
        [
            [2.39, 1.0, 0.0, 0.0],
            [-2.39, -1.0, 0.0, 0.0],
            [0.0, 0.0, 0.2, 2.0],
            [0.0, 0.0, -0.2, -2.0],
        ],
        [0, 1],
    ),
    PendulumVecEnv: (
        [[np.pi, 8.0], [-np.pi, -8.0], [0.0, 7.99], [3.0, -7.99]],
        [[-2.0], [2.0], [-5.0], [5.0]],
    ),
    AcrobotVecEnv: (
        # |dtheta2| in (4 pi, 9 pi]: clipped at MAX_VEL_2, not at MAX_VEL_1
        [
            [0.0, 0.0, 3.0, 25.0],
            [0.0, 0.0, -3.0, -25.0],
            [np.pi, -np.pi, 4 * np.pi, 9 * np.pi],
            [-3.1, 3.1, -4 * np.pi, -9 * np.pi],
        ],
        [0, 1, 2],
    ),
    MountainCarVecEnv: (
        # the left wall stops a car moving left; the right end and the speed limits clip
        [[-1.19, -0.03], [-1.2, -0.07], [-1.2, 0.0], [0.59, 0.07], [0.0, 0.07], [0.0, -0.07]],
        [0, 1, 2],
    ),
    ContinuousMountainCarVecEnv: (
        [[-1.19, -0.03], [-1.2, -0.07], [-1.2, 0.0], [0.59, 0.07], [0.0, 0.07], [0.0, -0.07]],
        [[-1.0], [0.0], [1.0], [-2.5], [2.5]],
    ),
}


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_sub_envs_match_the_single_env_from_boundary_states(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    """Every (boundary state, action) pair in a sub-env and in a single env put in that state,
    the action held for a few steps: bit for bit until the episode ends."""
    states, actions = BOUNDARIES[vec_cls]
    rows = [(state, action) for state in states for action in actions]
    vec = vec_cls(len(rows), autoreset=False)
    vec.reset(seed=0)
    vec.state[:] = [state for state, _ in rows]
    batch = np.asarray([action for _, action in rows], dtype=vec.batch_action_space.dtype)
    singles = [single_cls() for _ in rows]
    for single, (state, _) in zip(singles, rows, strict=True):
        single.reset(seed=0)
        single.state = np.array(state)
    done = np.zeros(len(rows), dtype=bool)
    for t in range(4):
        result = vec.step(batch)
        for i in np.flatnonzero(~done):
            expected = singles[i].step(batch[i])
            where = f"step {t}, state {rows[i][0]}, action {rows[i][1]}"
            np.testing.assert_array_equal(result.observations[i], expected.observation, where)
            assert result.rewards[i] == expected.reward, where
            assert result.terminated[i] == expected.terminated, where
        done |= result.dones


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_one_sub_env_draws_exactly_what_the_single_env_draws(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    # With one sub-env the shared generator is the single env's: same seed, same episodes
    # (autoreset draws what the single env's unseeded reset() draws).
    vec = vec_cls(1, max_episode_steps=60)
    env = sekai.TimeLimit(single_cls(), 60)
    np.testing.assert_array_equal(vec.reset(seed=9).observations[0], env.reset(seed=9).observation)
    vec.batch_action_space.seed(0)
    for _ in range(300):
        actions = vec.batch_action_space.sample()
        result = vec.step(actions)
        expected = env.step(actions[0])
        assert result.rewards[0] == expected.reward
        assert (result.terminated[0], result.truncated[0]) == (
            expected.terminated,
            expected.truncated,
        )
        if expected.done:
            np.testing.assert_array_equal(
                result.infos[0]["final_observation"], expected.observation
            )
            expected = env.reset()
        np.testing.assert_array_equal(result.observations[0], expected.observation)


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_spaces_and_metadata_are_the_single_envs(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    single, vec = single_cls(), vec_cls(3)
    assert vec.observation_space == single.observation_space
    assert vec.action_space == single.action_space
    assert vec.metadata == single.metadata
    assert repr(vec) == f"{vec_cls.__name__}(num_envs=3)"
    assert vec.state.shape[0] == 3


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_time_limit_truncates_with_elapsed_steps(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    vec = vec_cls(4, max_episode_steps=3, autoreset=False)
    vec.reset(seed=0)
    vec.state[:] = vec.state[0]  # the same (non-terminal) start everywhere
    actions = np.stack([vec.action_space.sample()] * 4)
    for step in range(1, 4):
        result = vec.step(actions)
        assert [info["elapsed_steps"] for info in result.infos] == [step] * 4
    assert result.truncated.all() or result.terminated.all()
    assert vec.frozen.all()


def test_autoreset_resets_finished_sub_envs_in_the_same_step() -> None:
    vec = CartPoleVecEnv(2)
    vec.reset(seed=0)
    vec.state[0] = [2.39, 5.0, 0.0, 0.0]  # leaves the track on the next step
    result = vec.step(np.array([1, 1]))
    assert result.terminated.tolist() == [True, False]
    final = result.infos[0]["final_observation"]
    assert final[0] > 2.4
    assert np.all(np.abs(result.observations[0]) <= 0.05)  # already the next episode
    assert "final_observation" not in result.infos[1]
    assert np.all(np.abs(vec.state[0]) <= 0.05)


def test_frozen_sub_envs_keep_their_final_state_without_autoreset() -> None:
    vec = CartPoleVecEnv(2, autoreset=False)
    vec.reset(seed=0)
    vec.state[0] = [2.39, 5.0, 0.0, 0.0]
    first = vec.step(np.array([1, 1]))
    frozen_state = vec.state[0].copy()
    second = vec.step(np.array([0, 0]))
    np.testing.assert_array_equal(vec.state[0], frozen_state)
    np.testing.assert_array_equal(second.observations[0], first.observations[0])
    assert second.rewards[0] == 0.0 and second.dones[0]
    assert vec.frozen.tolist() == [True, False]


def test_pendulum_resets_clear_the_last_torque_of_the_sub_envs_they_reset() -> None:
    # NaN, as the single env's last_u=None after a reset: its renderer draws no torque arrow.
    vec = PendulumVecEnv(3, max_episode_steps=2)
    vec.reset(seed=0)
    torques = np.array([[1.0], [-0.5], [2.0]], np.float32)
    vec.step(torques)
    np.testing.assert_array_equal(vec.last_u, torques[:, 0])
    vec.reset(seed=1)
    assert np.isnan(vec.last_u).all()
    vec.step(torques)
    assert vec.step(torques).truncated.all()  # and reset within the step (autoreset)
    assert np.isnan(vec.last_u).all()
    vec.step(torques)
    with pytest.raises(ValueError):  # sub-envs 0 and 2 reset, sub-env 1 not
        vec.reset(options=[None, {"x_init": "far"}, None])
    assert np.isnan(vec.last_u[[0, 2]]).all()
    assert vec.last_u[1] == -0.5


def test_reset_options_apply_per_sub_env() -> None:
    vec = CartPoleVecEnv(2)
    obs = vec.reset(seed=0, options=[{"low": 0.3, "high": 0.4}, None]).observations
    assert np.all((obs[0] >= 0.3) & (obs[0] <= 0.4))
    assert np.all(np.abs(obs[1]) <= 0.05)
    obs = PendulumVecEnv(2).reset(seed=0, options={"x_init": 0.1, "y_init": 0.0}).observations
    assert np.all(obs[:, 0] >= np.cos(0.1)) and np.all(obs[:, 2] == 0.0)


@pytest.mark.parametrize(
    ("env_id", "good", "bad", "error"),
    [
        ("CartPole-v1", {"low": 0.0, "high": 0.0}, {"low": 1, "high": 0}, ValueError),
        ("Acrobot-v1", {"low": 0.0, "high": 0.0}, {"low": "x"}, ValueError),
        ("MountainCar-v0", {"low": -0.5, "high": -0.5}, {"high": np.inf}, ValueError),
        ("Pendulum-v1", {"x_init": 0.0, "y_init": 0.0}, {"x_init": "far"}, ValueError),
        ("Pendulum-v1", {"x_init": 0.0, "y_init": 0.0}, {"y_init": np.inf}, ValueError),
    ],
)
def test_invalid_reset_options_of_one_sub_env_reset_the_others_then_raise(
    env_id: str, good: dict[str, Any], bad: dict[str, Any], error: type[Exception]
) -> None:
    options = [good, bad, good]
    sync = sekai.make_vec(env_id, 3, vectorization_mode="sync")
    sync.reset(seed=0)
    with pytest.raises(error):  # the single env's error, as SyncVecEnv raises it
        sync.reset(options=options)
    vec = sekai.make_vec(f"classic/{env_id}", 3)
    vec.reset(seed=0)
    before = vec.state.copy()
    with pytest.raises(error):
        vec.reset(options=options)
    np.testing.assert_array_equal(vec.state[1], before[1])  # not reset
    np.testing.assert_array_equal(vec.state[[0, 2]], np.asarray(sync.get_attr("state"))[[0, 2]])
    with pytest.raises(sekai.ResetRequired):
        vec.step(vec.batch_action_space.sample())


def test_reset_states_are_uniform_within_the_bounds() -> None:
    vec = CartPoleVecEnv(20_000)
    obs = vec.reset(seed=0).observations
    assert np.all(np.abs(obs) <= 0.05)
    np.testing.assert_allclose(obs.mean(axis=0), 0.0, atol=2e-3)
    np.testing.assert_allclose(obs.std(axis=0), 0.1 / np.sqrt(12), rtol=0.02)


def test_get_attr_and_set_attr_reach_the_physics_constants() -> None:
    vec = CartPoleVecEnv(2)
    assert vec.get_attr("x_threshold") == [2.4, 2.4]
    vec.set_attr("x_threshold", [0.001, 3.0])
    vec.reset(seed=0)
    vec.state[:] = [0.01, 0.0, 0.0, 0.0]
    assert vec.step(np.array([1, 1])).terminated.tolist() == [True, False]
    assert len(vec.get_attr("state")) == 2


@pytest.mark.parametrize(
    ("env_id", "names"),
    [
        ("MountainCar-v0", ["low", "high"]),
        ("MountainCarContinuous-v0", ["low_state", "high_state"]),
    ],
)
def test_constant_arrays_the_length_of_the_batch_are_not_split(
    env_id: str, names: list[str]
) -> None:
    # with 2 sub-envs, a (2,) bounds array must not be read as one row per sub-env
    native = sekai.make_vec(f"classic/{env_id}", 2)
    sync = sekai.make_vec(env_id, 2, vectorization_mode="sync")
    for name in names:
        for mine, theirs in zip(native.get_attr(name), sync.get_attr(name), strict=True):
            np.testing.assert_array_equal(mine, theirs)
            assert mine.shape == (2,)
        bounds = np.array([-1.0, 1.0], np.float32)
        native.set_attr(name, bounds)  # settable, as on the single env
        sync.set_attr(name, bounds)
        for mine, theirs in zip(native.get_attr(name), sync.get_attr(name), strict=True):
            np.testing.assert_array_equal(mine, theirs)


def test_constructor_keywords_reach_the_dynamics() -> None:
    vec = CartPoleVecEnv(1, sutton_barto_reward=True)
    vec.reset(seed=0)
    assert vec.step(np.array([0])).rewards[0] == 0.0
    assert PendulumVecEnv(1, g=9.81).g == 9.81
    assert MountainCarVecEnv(1, goal_velocity=0.01).get_attr("goal_velocity") == [0.01]
    assert ContinuousMountainCarVecEnv(1, goal_velocity=0.02).goal_velocity == 0.02


def test_invalid_actions_and_step_before_reset_are_rejected() -> None:
    vec = MountainCarVecEnv(2)
    with pytest.raises(sekai.ResetRequired):
        vec.step(np.array([0, 1]))
    vec.reset(seed=0)
    with pytest.raises(sekai.InvalidAction) as info:
        vec.step(np.array([0, 3]))
    assert info.value.index == 1
    box = PendulumVecEnv(2)
    box.reset(seed=0)
    with pytest.raises(sekai.InvalidAction):
        box.step(np.array([[0.0], [np.nan]], np.float32))


@pytest.mark.parametrize("env_id", ["Pendulum-v1", "classic/Pendulum-v1"])
def test_bool_box_actions_are_the_torques_1_and_0_as_in_a_single_env(env_id: str) -> None:
    vec = sekai.make_vec(env_id, 2)
    single = sekai.make("Pendulum-v1")
    single.reset(seed=0)
    assert np.array([True]) in single.action_space
    as_bool = single.step(np.array([True])).observation
    single.reset(seed=0)
    assert np.array_equal(as_bool, single.step(np.array([1.0])).observation)
    vec.reset(seed=0)
    stepped = vec.step(np.array([[True], [False]])).observations
    vec.reset(seed=0)
    assert np.array_equal(stepped, vec.step(np.array([[1.0], [0.0]])).observations)


def test_make_vec_picks_the_native_env_only_for_the_classic_namespace() -> None:
    native = sekai.make_vec("classic/CartPole-v1", num_envs=4)
    assert type(native) is CartPoleVecEnv and native.max_episode_steps == 500
    sync = sekai.make_vec("CartPole-v1", num_envs=2)
    assert repr(sync) == "SyncVecEnv(num_envs=2)"
    assert sync.get_attr("x_threshold") == [2.4, 2.4]
    native.close()
    sync.close()


@pytest.mark.parametrize(
    "env_id",
    [
        "classic/CartPole-v1",
        "classic/Pendulum-v1",
        "classic/Acrobot-v1",
        "classic/MountainCar-v0",
        "classic/MountainCarContinuous-v0",
    ],
)
def test_native_envs_conform(env_id: str) -> None:
    sekai.testing.assert_env_conforms(env_id, strict=True)


@pytest.mark.parametrize("integrator", ["euler", "semi-implicit euler"])
def test_per_env_constants_and_integrators_match_single_envs(integrator: str) -> None:
    vec = CartPoleVecEnv(4)
    vec.reset(seed=0)
    vec.set_attr("kinematics_integrator", integrator)
    vec.set_attr("tau", [0.01, 0.02, 0.03, 0.04])
    vec.set_attr("force_mag", [5.0, 10.0, 15.0, 20.0])
    singles = []
    for i in range(4):
        env = CartPoleEnv()
        env.reset(seed=0)
        env.kinematics_integrator = integrator
        env.tau, env.force_mag = 0.01 * (i + 1), 5.0 * (i + 1)
        env.state = vec.state[i].copy()
        singles.append(env)
    for t in range(8):
        actions = np.array([t % 2, 1, 0, (t // 2) % 2])
        result = vec.step(actions)
        for i, env in enumerate(singles):
            expected = env.step(int(actions[i])).observation
            obs = result.infos[i].get("final_observation", result.observations[i])
            np.testing.assert_array_equal(obs, expected)
            if result.dones[i]:
                env.reset(seed=0)
                env.state = vec.state[i].copy()


@pytest.mark.parametrize(("single_cls", "vec_cls", "reset_dtype"), CASES)
def test_frozen_sub_envs_keep_their_state_while_the_others_match_the_single_env(
    single_cls: Any, vec_cls: Any, reset_dtype: Any
) -> None:
    num_envs = 16
    vec = vec_cls(num_envs, max_episode_steps=40, autoreset=False)
    vec.reset(seed=2)
    singles = [single_cls() for _ in range(num_envs)]
    for i, single in enumerate(singles):
        single.reset(seed=0)
        single.state = vec.state[i].astype(reset_dtype)
    space = vec.batch_action_space
    space.seed(5)
    final_states: dict[int, Any] = {}
    for t in range(45):
        actions = space.sample()
        was_frozen = vec.frozen
        result = vec.step(actions)
        for i in range(num_envs):
            where = f"step {t}, sub-env {i}"
            if was_frozen[i]:
                np.testing.assert_array_equal(vec.state[i], final_states[i], err_msg=where)
                continue
            expected = singles[i].step(actions[i])
            np.testing.assert_array_equal(
                result.observations[i], expected.observation, err_msg=where
            )
            assert result.rewards[i] == expected.reward, where
            if result.dones[i]:
                final_states[i] = vec.state[i].copy()
    assert vec.frozen.all()


@pytest.mark.parametrize(
    ("env_id", "n"),
    [("classic/CartPole-v1", 2), ("classic/Acrobot-v1", 3), ("classic/MountainCar-v0", 3)],
)
@pytest.mark.parametrize("mode", ["sync", "native"])
def test_an_action_space_set_on_the_sub_envs_leaves_the_actions_checked_as_built(
    env_id: str, n: int, mode: str
) -> None:
    vec = sekai.make_vec(env_id, 2, vectorization_mode=mode)
    vec.reset(seed=0)
    vec.set_attr("action_space", sekai.Discrete(n + 3))
    assert vec.get_attr("action_space") == [sekai.Discrete(n + 3)] * 2
    assert vec.action_space == sekai.Discrete(n)
    message = f"Action {n + 2} is not valid for space Discrete({n}) (sub-env 0)."
    with pytest.raises(sekai.InvalidAction, match=re.escape(message)):
        vec.step(np.full(2, n + 2))
    vec.step(np.zeros(2, np.int64))
