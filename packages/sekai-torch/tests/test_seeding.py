"""The "torch" mode's generator: seeded from ``reset(seed=...)`` as accelerators.md says."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

from sekai.spaces import Box, Discrete
from sekai.torch import TorchVecEnv
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep

N = 3


@dataclass(frozen=True)
class _NoParams:
    pass


class _Draws(ArrayKernel[_NoParams]):
    """Observes a uniform and a normal, drawn at every reset and step; episodes never end."""

    def __init__(self) -> None:
        self.observation_space = Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = Discrete(2)
        self.params = _NoParams()

    def reset_draws(self, params: _NoParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"), Draw("z", "normal"))

    step_draws = reset_draws

    @staticmethod
    def _observe(xp: Any, draws: Mapping[str, Any]) -> Any:
        return xp.stack([draws["u"], draws["z"]], axis=1)

    def reset(self, xp: Any, params: _NoParams, draws: Any, mask: Any, state: Any) -> KernelReset:
        obs = self._observe(xp, draws)
        if state is not None:
            obs = xp.where(mask[:, None], obs, state["obs"])
        return {"obs": obs}, obs, {}

    def step(self, xp: Any, params: _NoParams, state: Any, action: Any, draws: Any) -> KernelStep:
        obs = self._observe(xp, draws)
        never = xp.zeros(obs.shape[0], dtype=bool)
        return {"obs": obs}, obs, xp.zeros_like(obs[:, 0]), never, never, {}


@pytest.mark.parametrize(
    ("seed", "generator"),
    [
        (7, lambda: np.random.default_rng(7)),
        # one seed per sub-env: combined into one SeedSequence, as a native env does
        ([4, 5, 6], lambda: np.random.default_rng(np.random.SeedSequence([4, 5, 6]))),
    ],
    ids=["int", "list"],
)
def test_a_seed_seeds_the_torch_generator_with_one_draw_of_the_native_generator(
    seed: Any, generator: Callable[[], np.random.Generator]
) -> None:
    # accelerators.md: the torch.Generator is seeded with int(rng.integers(2**63)).
    documented = torch.Generator(device="cpu")
    documented.manual_seed(int(generator().integers(2**63)))

    def draws() -> torch.Tensor:
        u = torch.rand((N,), generator=documented, dtype=torch.float32)
        z = torch.randn((N,), generator=documented, dtype=torch.float32)
        return torch.stack([u, z], dim=1)

    envs = TorchVecEnv(_Draws(), N)
    torch.testing.assert_close(envs.reset(seed=seed).observations, draws(), rtol=0, atol=0)
    step = envs.step(np.zeros(N, np.int64))  # the same stream goes on
    torch.testing.assert_close(step.observations, draws(), rtol=0, atol=0)
