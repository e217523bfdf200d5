"""The "jax" vectorization mode and the functional API, on CPU."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sekai
from sekai.envs.classic_control.kernels.cartpole import CartPoleKernel
from sekai.jax import FunctionalEnv, JaxVecEnv, make_functional
from sekai.testing.kernels import assert_kernel_equivalent


def test_make_vec_jax_gives_jitted_envs_returning_jax_arrays() -> None:
    envs = sekai.make_vec("CartPole-v1", 4, vectorization_mode="jax")
    assert isinstance(envs, JaxVecEnv)
    assert repr(envs) == "JaxVecEnv(CartPole-v1, num_envs=4, backend=jax, float32)"
    first = envs.reset(seed=0)
    assert isinstance(first.observations, jax.Array) and first.observations.shape == (4, 4)
    step = envs.step(np.ones(4, dtype=np.int64))
    assert step.observations.dtype == jnp.float32 and step.rewards.dtype == jnp.float32
    assert isinstance(step.terminated, jax.Array) and step.terminated.dtype == jnp.bool_
    assert step.infos[0]["elapsed_steps"] == 1  # the registered 500-step limit counts
    envs.close()


def test_the_same_seed_gives_the_same_episodes() -> None:
    def run(seed: int) -> np.ndarray:
        envs = sekai.make_vec("CartPole-v1", 8, vectorization_mode="jax", max_episode_steps=10)
        envs.reset(seed=seed)
        for _ in range(25):  # through autoresets, which draw from the key
            out = envs.step(np.zeros(8, dtype=np.int64))
        return np.asarray(out.observations)

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


def test_jax_matches_the_numpy_driver_under_the_same_draws() -> None:
    assert_kernel_equivalent(
        CartPoleKernel, backends=("jax",), num_envs=6, steps=40, max_episode_steps=15
    )


def test_invalid_actions_are_caught_on_the_device_unless_checks_are_off() -> None:
    envs = sekai.make_vec("CartPole-v1", 3, vectorization_mode="jax")
    envs.reset(seed=0)
    with pytest.raises(sekai.InvalidAction) as caught:
        envs.step(jnp.array([0, 5, 1]))
    assert caught.value.index == 1
    loose = sekai.make_vec(
        "CartPole-v1", 3, vectorization_mode="jax", vector_kwargs={"check_actions": False}
    )
    loose.reset(seed=0)
    loose.step(jnp.array([0, 5, 1]))


def test_finished_sub_envs_freeze_without_autoreset() -> None:
    envs = sekai.make_vec(
        "CartPole-v1",
        2,
        vectorization_mode="jax",
        max_episode_steps=3,
        vector_kwargs={"autoreset": False},
    )
    envs.reset(seed=0)
    for _ in range(3):
        last = envs.step(np.zeros(2, dtype=np.int64))
    after = envs.step(np.zeros(2, dtype=np.int64))
    assert envs.frozen.all() and np.asarray(last.truncated).all()
    np.testing.assert_array_equal(np.asarray(after.observations), np.asarray(last.observations))
    np.testing.assert_array_equal(np.asarray(after.rewards), [0.0, 0.0])


def test_set_attr_changes_a_parameter_of_the_jitted_step() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    envs.reset(seed=0)
    envs.set_attr("force_mag", 0.0)
    assert envs.get_attr("force_mag") == [0.0, 0.0]
    before = np.asarray(envs.state["x_dot"])
    envs.step(np.ones(2, dtype=np.int64))
    after = np.asarray(envs.state["x_dot"])
    assert np.abs(after - before).max() < 0.01  # no push: only the pole's reaction moves it


def test_the_functional_api_runs_inside_jit_and_scan_with_autoreset() -> None:
    env = make_functional("CartPole-v1", 16, max_episode_steps=20)
    assert isinstance(env, FunctionalEnv)
    state, _, _ = env.reset(jax.random.PRNGKey(0))

    @jax.jit
    def rollout(state: dict, key: jax.Array) -> tuple[dict, jax.Array]:
        def body(carry: tuple, key: jax.Array) -> tuple:
            state, params = carry
            t = env.step(key, state, jnp.zeros(16, jnp.int32), params)
            return (t.state, params), (t.reward, t.done, t.observation)

        keys = jax.random.split(key, 50)
        (state, _), out = jax.lax.scan(body, (state, env.default_params), keys)
        return state, out

    state, (rewards, dones, observations) = rollout(state, jax.random.PRNGKey(1))
    assert rewards.shape == (50, 16) and bool(dones.any())
    restarted = np.asarray(observations)[np.asarray(dones)]
    assert np.abs(restarted).max() <= 0.05  # the new episodes' first observations
    assert int(np.asarray(state["elapsed"]).max()) < 20


def test_the_functional_api_vmaps_over_parameters() -> None:
    env = make_functional("CartPole-v1", 4)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    forces = jnp.array([5.0, 10.0, 20.0])
    params = {**env.default_params, "force_mag": forces}
    axes = {name: (0 if name == "force_mag" else None) for name in params}
    step = jax.vmap(env.step, in_axes=(None, None, None, axes))
    out = step(jax.random.PRNGKey(1), state, jnp.ones(4, jnp.int32), params)
    x_dot = np.asarray(out.state["state"]["x_dot"])
    assert x_dot.shape == (3, 4) and (np.diff(x_dot, axis=0) > 0).all()


def test_floats_are_float64_when_x64_is_on() -> None:
    jax.config.update("jax_enable_x64", True)
    try:
        envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
        envs.reset(seed=0)
        out = envs.step(np.zeros(2, dtype=np.int64))
        assert out.rewards.dtype == jnp.float64 and envs.state["x"].dtype == jnp.float64
        assert out.observations.dtype == jnp.float32  # the observation space's dtype
    finally:
        jax.config.update("jax_enable_x64", False)


def test_modes_refuse_envs_without_a_kernel_and_per_env_wrappers() -> None:
    with pytest.raises(ValueError, match="no array kernel"):
        sekai.make_vec("Pendulum-v1", 2, vectorization_mode="jax")
    with pytest.raises(ValueError, match="no per-env objects to wrap"):
        sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax", wrappers=[lambda e: e])


def test_plugin_discovery_does_not_import_jax() -> None:
    import subprocess
    import sys

    code = "import sys, sekai; sekai.all_specs(); print('jax' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_episode_statistics_and_reward_normalisation_wrap_jax_env() -> None:
    inner = sekai.make_vec("CartPole-v1", 4, vectorization_mode="jax")
    vec = sekai.VecNormalizeReward(sekai.VecRecordEpisodeStatistics(inner), gamma=0.9)
    vec.reset(seed=0)
    episodes = []
    for _ in range(40):
        result = vec.step(jnp.zeros(4, dtype=jnp.int32))
        assert isinstance(result.rewards, jax.Array)  # scaled where the env put them
        for i, info in enumerate(result.infos):
            if "episode" in info:
                episodes.append((i, info["episode"].episode_length, info["episode"].episode_return))
    assert len(episodes) >= 4
    # CartPole pays 1 a step: each recorded return is its episode's length
    assert all(length == ret for _, length, ret in episodes)
    assert vec.return_rms.count == 160


@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("bad", [[0.5, 1.0], [float("nan"), 1.0], [True, False]])
def test_a_discrete_action_must_be_an_integral_number_not_a_bool(
    bad: list[float], where: str
) -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    envs.reset(seed=0)
    actions = np.array(bad) if where == "host" else jnp.asarray(bad)
    with pytest.raises(sekai.InvalidAction, match=r"\(sub-env 0\)") as caught:
        envs.step(actions)
    assert caught.value.index == 0


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), None, np.array([1, 2**32])])
def test_host_actions_are_checked_before_the_backend_converts_them(bad: object) -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    envs.reset(seed=0)
    with pytest.raises((sekai.InvalidAction, ValueError), match=r"sub-env|must have shape"):
        envs.step(bad)


def test_integral_float_actions_act_as_their_integers() -> None:
    by_float = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    by_int = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    by_float.reset(seed=0)
    by_int.reset(seed=0)
    for _ in range(3):
        a = by_float.step(jnp.asarray([0.0, 1.0]))
        b = by_int.step(np.array([0, 1]))
        np.testing.assert_array_equal(np.asarray(a.observations), np.asarray(b.observations))


def test_set_attr_of_the_time_limit_applies_to_the_next_steps() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax", max_episode_steps=100)
    envs.set_attr("max_episode_steps", 2)
    envs.reset(seed=0)
    truncated = [bool(np.asarray(envs.step(np.array([0, 1])).truncated).any()) for _ in range(3)]
    assert truncated == [False, True, False]
    with pytest.raises(ValueError, match=r"^max_episode_steps must be >= 1, got -1\.$"):
        envs.set_attr("max_episode_steps", -1)
    with pytest.raises(TypeError, match=r"^max_episode_steps must be an int or None, got str\.$"):
        envs.set_attr("max_episode_steps", "x")
    assert envs.get_attr("max_episode_steps") == [2, 2]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_envs": -1}, ValueError, "num_envs must be >= 1, got -1."),
        ({"num_envs": 2.5}, TypeError, "num_envs must be an int, got float."),
        ({"num_envs": 2, "max_episode_steps": 0}, ValueError, "max_episode_steps must be >= 1"),
    ],
)
def test_make_functional_checks_its_sizes(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        make_functional("CartPole-v1", **kwargs)


def test_functional_params_with_an_unknown_name_are_refused() -> None:
    env = make_functional("CartPole-v1", 2)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"^unknown params \['force_magg'\] for CartPoleKernel"):
        env.step(jax.random.PRNGKey(1), state, jnp.zeros(2, jnp.int32), {"force_magg": 100.0})


def test_set_attr_of_a_float_parameter_takes_an_int_and_refuses_an_array() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    envs.set_attr("force_mag", 20)
    assert envs.get_attr("force_mag") == [20.0, 20.0]
    with pytest.raises(TypeError, match=r"same kind and shape, got array\(\[1\., 2\., 3\.\]\)"):
        envs.set_attr("force_mag", np.array([1.0, 2.0, 3.0]))
    assert envs.get_attr("force_mag") == [20.0, 20.0]


def test_the_device_may_be_a_platform_name() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": "cpu"}
    )
    assert envs.reset(seed=0).observations.devices() == {jax.devices("cpu")[0]}
    with pytest.raises(ValueError, match=r"^device 'cpu:7': the index must be one of 0\.\.0"):
        sekai.make_vec(
            "CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": "cpu:7"}
        )
    with pytest.raises(TypeError, match=r"^device must be a jax\.Device or a platform name"):
        sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": 3})


def test_integral_float_indices_become_jax_integers() -> None:
    from sekai.jax.backend import JaxBackend
    from sekai.spaces import Discrete
    from sekai.vector.kernel_backend import index_actions

    cast = index_actions(JaxBackend(), Discrete(3), jnp.asarray([0.0, 2.0]))
    assert jnp.issubdtype(cast.dtype, jnp.integer) and cast.tolist() == [0, 2]
