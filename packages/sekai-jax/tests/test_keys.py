"""The keys of the "jax" mode: derived from ``reset(seed=...)`` as accelerators.md says, and
never one key for two draws."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import erfinv

from sekai.jax import FunctionalEnv, JaxVecEnv
from sekai.testing.kernels import DrawsKernel

N = 8


def _same_key_normal(u: np.ndarray) -> np.ndarray:
    """The normal ``jax.random.normal`` gives from the key that gave the uniform ``u``."""
    return np.asarray(jnp.sqrt(2.0) * erfinv(2.0 * jnp.asarray(u) - 1.0))


def _independent(obs: np.ndarray) -> bool:
    """Whether the normals of ``obs`` (uniform, normal rows) came from other keys."""
    return bool(np.abs(obs[:, 1] - _same_key_normal(obs[:, 0])).max() > 0.1)


def test_two_draws_of_one_reset_or_step_come_from_different_keys() -> None:
    envs = JaxVecEnv(DrawsKernel(every_step_ends=True), N, dtype="float32")
    first = np.asarray(envs.reset(seed=0).observations)
    assert _independent(first)
    steps = []
    for _ in range(2):
        out = envs.step(np.zeros(N, np.int64))
        ended = np.stack([info["final_observation"] for info in out.infos])
        restarted = np.asarray(out.observations)  # the autoreset's draws
        assert _independent(ended) and _independent(restarted)
        # The step's noise and its autoreset's noise have keys of their own.
        assert not np.isin(ended[:, 0], restarted[:, 0]).any()
        steps.append(ended)
    assert not np.isin(steps[1][:, 0], steps[0][:, 0]).any()  # each step splits the key again
    assert not np.isin(steps[0][:, 0], first[:, 0]).any()


def _documented_key(rng: np.random.Generator) -> jax.Array:
    """accelerators.md: the key starts from two 32-bit words drawn from the generator (a
    threefry key)."""
    words = rng.integers(2**32, size=2, dtype=np.uint32)
    return jax.random.wrap_key_data(jnp.asarray(words), impl="threefry2x32")


@pytest.mark.parametrize(
    ("seed", "generator"),
    [
        (7, lambda: np.random.default_rng(7)),
        # one seed per sub-env: combined into one SeedSequence, as a native env does
        (
            list(range(10, 10 + N)),
            lambda: np.random.default_rng(np.random.SeedSequence(list(range(10, 10 + N)))),
        ),
    ],
    ids=["int", "list"],
)
def test_a_seed_gives_the_key_the_docs_derive_split_at_every_reset_and_step(
    seed: Any, generator: Any
) -> None:
    kernel = DrawsKernel(every_step_ends=True)
    functional = FunctionalEnv(kernel, N)
    key, sub = jax.random.split(_documented_key(generator()))
    want = functional.reset(sub)
    envs = JaxVecEnv(kernel, N)
    np.testing.assert_array_equal(envs.reset(seed=seed).observations, want.observation)
    key, sub = jax.random.split(key)
    action = jnp.zeros(N, jnp.int32)
    then = functional.step(sub, want.state, action)
    out = envs.step(np.zeros(N, np.int64))
    np.testing.assert_array_equal(out.observations, then.observation)
    ended = np.stack([info["final_observation"] for info in out.infos])
    np.testing.assert_array_equal(ended, then.final_observation)
