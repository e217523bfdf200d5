"""The "torch" mode's generator: seeded from ``reset(seed=...)`` as accelerators.md says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from sekai.testing.kernels import DrawsKernel
from sekai.torch import TorchVecEnv

N = 3


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

    envs = TorchVecEnv(DrawsKernel(), N)
    torch.testing.assert_close(envs.reset(seed=seed).observations, draws(), rtol=0, atol=0)
    step = envs.step(np.zeros(N, np.int64))  # the same stream goes on
    torch.testing.assert_close(step.observations, draws(), rtol=0, atol=0)
