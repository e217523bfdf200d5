"""Tiny deterministic test envs for the wrapper tests, handed out through fixtures."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai


class ToyEnv(sekai.Env[Any, Any]):
    """Counts steps; obs [t, -t] (or a seeded sample of any space); reward = obs_fn/reward_fn."""

    def __init__(
        self,
        observation_space: sekai.Space[Any] | None = None,
        action_space: sekai.Space[Any] | None = None,
        length: int = 5,
        reward_fn: Callable[[Any, int], float] | None = None,
        obs_fn: Callable[[ToyEnv], Any] | None = None,
        truncate: bool = False,
    ) -> None:
        self.observation_space = observation_space or sekai.Box(-100.0, 100.0, shape=(2,))
        self.action_space = action_space or sekai.Discrete(3)
        self.length = length
        self.reward_fn = reward_fn or (lambda action, t: 1.0)
        self.obs_fn = obs_fn
        self.truncate = truncate
        self.t = 0
        self.actions: list[Any] = []
        self.resets: list[dict[str, Any]] = []

    def _obs(self) -> Any:
        if self.obs_fn is not None:
            return self.obs_fn(self)
        if self.observation_space == sekai.Box(-100.0, 100.0, shape=(2,)):
            return np.array([self.t, -self.t], dtype=np.float32)
        self.observation_space.seed(int(self.rng.integers(2**31)))
        return self.observation_space.sample()

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        self.resets.append({"seed": seed, "options": options})
        return sekai.ResetResult(self._obs(), {"reset": len(self.resets)})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.actions.append(action)
        self.t += 1
        done = self.t >= self.length
        return sekai.StepResult(
            self._obs(),
            float(self.reward_fn(action, self.t)),
            done and not self.truncate,
            done and self.truncate,
            {"t": self.t},
        )


class AsyncToyEnv(ToyEnv):
    """ToyEnv whose async methods really await; its sync methods use asyncio.run().

    So a wrapper that routes async_step() through step() fails inside a running loop.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.awaits = 0

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        await asyncio.sleep(0)
        self.awaits += 1
        return ToyEnv.reset(self, seed=seed, options=options)

    async def async_step(self, action: Any) -> sekai.StepResult[Any]:
        await asyncio.sleep(0)
        self.awaits += 1
        return ToyEnv.step(self, action)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return asyncio.run(self.async_reset(seed=seed, options=options))

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return asyncio.run(self.async_step(action))


class MaskedToyEnv(ToyEnv):
    """ToyEnv with an action_mask() that forbids action 1 (Discrete(3) actions)."""

    def action_mask(self) -> np.ndarray:
        return np.array([1, 0, 1], dtype=np.int8)


@pytest.fixture
def toy_env() -> type[ToyEnv]:
    return ToyEnv


@pytest.fixture
def async_toy_env() -> type[AsyncToyEnv]:
    return AsyncToyEnv


@pytest.fixture
def masked_toy_env() -> type[MaskedToyEnv]:
    return MaskedToyEnv


class AsyncMaskedToyEnv(AsyncToyEnv):
    """AsyncToyEnv with MaskedToyEnv's action_mask()."""

    def action_mask(self) -> np.ndarray:
        return np.array([1, 0, 1], dtype=np.int8)


@pytest.fixture
def async_masked_toy_env() -> type[AsyncMaskedToyEnv]:
    return AsyncMaskedToyEnv
