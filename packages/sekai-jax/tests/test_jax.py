"""The "jax" vectorization mode and the functional API, on CPU."""

from __future__ import annotations

import re
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sekai
from sekai.jax import FunctionalEnv, JaxVecEnv, make_functional
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase


@pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
def test_the_jax_mode_passes_every_kernel_mode_check(check: Callable[[ModeCase], None]) -> None:
    check(ModeCase("jax", jnp.asarray, "jax"))


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
