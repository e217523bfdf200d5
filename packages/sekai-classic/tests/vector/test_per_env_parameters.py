"""Per-sub-env parameters (``set_attr`` with a list): the native envs match SyncVecEnv."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai

N = 3


def _pair(env_id: str, name: str, values: list[Any]) -> tuple[sekai.VecEnv, Any]:
    """A SyncVecEnv of single envs and the native env, both given ``values`` for ``name`` and
    put in the same states."""
    sync = sekai.make_vec(env_id, N, vectorization_mode="sync")
    native = sekai.make_vec(f"classic/{env_id}", N)
    for vec in (sync, native):
        vec.set_attr(name, values)
    sync.reset(seed=0)
    native.reset(seed=1)
    native.state[:] = [np.asarray(state, np.float64) for state in sync.get_attr("state")]
    return sync, native


def _step_both(sync: sekai.VecEnv, native: Any, rows: list[int], steps: int = 60) -> None:
    """Step both with the same actions until an episode ends; sub-envs ``rows`` must agree bit
    for bit (observations, rewards, flags)."""
    space = sync.batch_action_space
    space.seed(0)
    for t in range(steps):
        actions = space.sample()
        if actions.dtype.kind == "f" and t % 3 == 0:
            actions = actions * 2.5  # finite values out of bounds: clipped by both
        expected, result = sync.step(actions), native.step(actions)
        for i in rows:
            where = f"step {t}, sub-env {i}"
            np.testing.assert_array_equal(_last(result, i), _last(expected, i), err_msg=where)
            assert result.rewards[i] == expected.rewards[i], where
            assert result.dones[i] == expected.dones[i], where
        if expected.dones.any():  # the autoreset draws from other generators: stop here
            break


def _last(result: Any, i: int) -> Any:
    """Sub-env ``i``'s observation after the step (the terminal one when it was reset)."""
    return result.infos[i].get("final_observation", result.observations[i])


@pytest.mark.parametrize(
    ("env_id", "name", "values"),
    [
        ("Pendulum-v1", "max_torque", [2.0, 0.5, 1.3]),
        ("Pendulum-v1", "m", [1.0, 1.1, 0.9]),
        ("Pendulum-v1", "l", [1.0, 1.1, 0.9]),
        ("MountainCarContinuous-v0", "power", [0.0015, 0.003, 0.0011]),
        ("MountainCarContinuous-v0", "min_action", [-1.0, -1.1, -0.9]),
        ("MountainCarContinuous-v0", "max_action", [1.0, 1.1, 0.9]),
        ("MountainCarContinuous-v0", "min_position", [-1.2, -0.5, -1.0]),
        ("MountainCarContinuous-v0", "max_position", [0.6, -0.45, 0.5]),
        ("MountainCarContinuous-v0", "max_speed", [0.07, 0.001, 0.05]),
        ("MountainCarContinuous-v0", "goal_position", [0.45, -0.6, 0.4]),
        ("MountainCarContinuous-v0", "goal_velocity", [0, -1, 1]),
        ("CartPole-v1", "kinematics_integrator", ["euler", "semi-implicit euler", "euler"]),
        ("Acrobot-v1", "AVAIL_TORQUE", [[-1.0, 0.0, 1.0], [-3.0, 0.0, 3.0], [1.0, 0.0, -1.0]]),
        ("Acrobot-v1", "book_or_nips", ["nips"] * N),
    ],
)
def test_per_sub_env_parameters_match_sync_vec_env_bit_for_bit(
    env_id: str, name: str, values: list[Any]
) -> None:
    sync, native = _pair(env_id, name, values)
    _step_both(sync, native, list(range(N)))


def test_pendulum_clips_each_sub_env_at_its_own_max_torque() -> None:
    sync, native = _pair("Pendulum-v1", "max_torque", [2.0, 0.5, 1.0])
    actions = np.full((N, 1), 2.0, np.float32)
    sync.step(actions)
    native.step(actions)
    assert native.get_attr("last_u") == sync.get_attr("last_u") == [2.0, 0.5, 1.0]


def test_acrobot_adds_torque_noise_only_where_its_bound_is_positive() -> None:
    sync, native = _pair("Acrobot-v1", "torque_noise_max", [0.0, 0.1, -0.1])
    _step_both(sync, native, [0, 2])  # no noise: the single env's dynamics exactly
    native.reset(seed=0)
    start = native.state.copy()
    native.set_attr("torque_noise_max", [0.0, 0.0, 0.0])
    quiet = native.step(np.ones(N, int)).observations
    native.state = start.copy()  # the same step again, with noise for sub-env 1 only
    native.set_attr("torque_noise_max", [0.0, 0.1, 0.0])
    noisy = native.step(np.ones(N, int)).observations
    assert np.array_equal(noisy[[0, 2]], quiet[[0, 2]]) and not np.array_equal(noisy[1], quiet[1])


def test_acrobot_scalar_torque_noise_draws_as_one_bound_per_sub_env_does() -> None:
    native = sekai.make_vec("classic/Acrobot-v1", N)
    native.reset(seed=0)
    start, draws = native.state.copy(), native.rng.bit_generator.state

    def step_with(noise: Any) -> np.ndarray:
        native.state = start.copy()
        native.rng.bit_generator.state = draws
        native.set_attr("torque_noise_max", noise)
        observations: np.ndarray = native.step(np.ones(N, int)).observations
        return observations

    quiet, scalar, per_env = step_with(0.0), step_with(0.5), step_with([0.5] * N)
    np.testing.assert_array_equal(scalar, per_env)
    assert all(not np.array_equal(scalar[i], quiet[i]) for i in range(N))


def test_acrobot_refuses_different_equations_per_sub_env_and_accepts_one() -> None:
    vec = sekai.make_vec("classic/Acrobot-v1", N)
    with pytest.raises(ValueError, match=r"book_or_nips is one value for every sub-env"):
        vec.set_attr("book_or_nips", ["book", "nips", "book"])
    assert vec.get_attr("book_or_nips") == ["book"] * N
    vec.set_attr("book_or_nips", ["nips"] * N)
    assert vec.book_or_nips == "nips"
    # After the refusal it steps as an env only ever given "nips" (whose dynamics are
    # compared with SyncVecEnv's above).
    fresh = sekai.make_vec("classic/Acrobot-v1", N)
    fresh.set_attr("book_or_nips", "nips")
    actions = np.array([0, 2, 1])
    for env in (vec, fresh):
        env.reset(seed=0)
    for _ in range(20):
        np.testing.assert_array_equal(
            vec.step(actions).observations, fresh.step(actions).observations
        )


def test_continuous_mountain_car_compares_float32_forces_with_its_bounds_as_float32() -> None:
    # The single env compares a float32 force with a Python float bound in float32 (NEP 50):
    # float32(1.1) is not above 1.1 there, so it is not clipped.
    sync, native = _pair("MountainCarContinuous-v0", "max_action", [1.1, 1.1, 1.0])
    native.set_attr("min_action", [-1.1] * N)
    sync.set_attr("min_action", [-1.1] * N)
    actions = np.array([[1.1], [-1.1], [1.1]], np.float32)
    for _ in range(5):
        expected, result = sync.step(actions), native.step(actions)
        np.testing.assert_array_equal(result.observations, expected.observations)
        np.testing.assert_array_equal(result.rewards, expected.rewards)
