"""The numpy kernel driver draws reset noise for the finished rows only, in row order: a kernel
whose reset draws are those of its native env consumes the generator exactly as that env does,
across autoresets of some sub-envs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.spaces import Box, Discrete
from sekai.vector import NativeVecEnv
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_vec_env import KernelVecEnv

_LIMIT = 2.0
_SPACE = Box(-10.0, 10.0, (1,), np.float64)


@dataclass(frozen=True)
class _NoParams:
    pass


class _UniformStart(ArrayKernel[_NoParams]):
    """Starts at a uniform in [0, 1), moves by +1 (action 0) or -1 (action 1); an episode ends
    once ``|x| > 2``."""

    def __init__(self) -> None:
        self.observation_space = _SPACE
        self.action_space = Discrete(2)
        self.params = _NoParams()

    def reset_draws(self, params: _NoParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"),)

    def reset(
        self, xp: Any, params: _NoParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = draws["u"]
        if state is not None:
            x = xp.where(mask, x, state["x"])
        return {"x": x}, x[:, None], {}

    def step(
        self, xp: Any, params: _NoParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"] + 1.0 - 2.0 * action
        done = xp.abs(x) > _LIMIT
        return {"x": x}, x[:, None], x, done, xp.zeros_like(done), {}


class _UniformStartVecEnv(NativeVecEnv):
    """The same env, native: a reset draws one uniform per reset sub-env, in row order."""

    def __init__(self, num_envs: int) -> None:
        super().__init__(num_envs, _SPACE, Discrete(2))
        self.x = np.zeros(num_envs)

    def _reset_envs(self, indices: np.ndarray, options: Sequence[dict[str, Any] | None]) -> None:
        self.x[indices] = self.rng.random(len(indices))

    def _observe(self) -> np.ndarray:
        return self.x[:, None].copy()

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        self.x = self.x + 1.0 - 2.0 * np.asarray(actions)
        terminated = np.abs(self.x) > _LIMIT
        return self.x.copy(), terminated, np.zeros(self.num_envs, bool), {}


def test_the_numpy_kernel_driver_draws_as_the_native_env_across_partial_autoresets() -> None:
    n = 4
    native = _UniformStartVecEnv(n)
    kernel = KernelVecEnv(_UniformStart(), n)
    np.testing.assert_array_equal(
        kernel.reset(seed=3).observations, native.reset(seed=3).observations
    )
    actions = np.random.default_rng(0).integers(0, 2, (40, n))
    partial = 0
    for t, action in enumerate(actions):
        want, got = native.step(action), kernel.step(action)
        np.testing.assert_array_equal(got.observations, want.observations, err_msg=f"step {t}")
        np.testing.assert_array_equal(got.terminated, want.terminated, err_msg=f"step {t}")
        partial += 0 < want.terminated.sum() < n
    assert partial > 5  # many steps reset some sub-envs but not all
