"""JAX's bfloat16 (an ml_dtypes type NumPy knows only as kind "V") where sekai takes numbers."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from sekai.spaces import Box, Discrete, unflatten


def test_unflatten_takes_bfloat16_values_as_the_numbers_they_hold() -> None:
    values = np.asarray(jnp.array([0.25, 7.0, float("nan")], dtype=jnp.bfloat16))
    assert values.dtype.kind == "V"
    out = unflatten(Box(0.0, 1.0, (3,), np.float32), values)
    assert out.dtype == np.float32 and out.tolist() == [0.25, 1.0, 0.0]
    assert unflatten(Box(0, 3, (3,), np.int64), values).tolist() == [0, 3, 0]
    one_hot = np.asarray(jnp.array([0.25, 7.0, 1.0], dtype=jnp.bfloat16))
    assert unflatten(Discrete(3), one_hot) == 1


def test_unflatten_takes_bfloat16_scalars_and_jax_arrays_in_an_object_array() -> None:
    items = np.array([jnp.bfloat16(1.5), jnp.float32(0.5), None], dtype=object)
    assert unflatten(Box(-5.0, 5.0, (3,), np.float64), items).tolist() == [1.5, 0.5, 0.0]


def test_rescale_action_takes_bfloat16_bounds_as_the_numbers_they_hold() -> None:
    import sekai

    class Push(sekai.Env[np.ndarray, np.ndarray]):
        observation_space = Box(-1.0, 1.0, (1,))
        action_space = Box(-2.0, 2.0, (1,))

        def reset(self, *, seed: sekai.SeedLike = None, options: object = None) -> Any:
            return sekai.ResetResult(np.zeros(1, np.float32))

        def step(self, action: np.ndarray) -> Any:
            return sekai.StepResult(np.zeros(1, np.float32), float(action[0]), False, False)

    low, high = jnp.full(1, -0.5, jnp.bfloat16), jnp.full(1, 0.5, jnp.bfloat16)
    env = sekai.RescaleAction(Push(), low, high)
    assert env.action_space == Box(-0.5, 0.5, (1,), np.float32)
    env.reset()
    assert env.step(np.array([0.5], np.float32)).reward == 2.0
