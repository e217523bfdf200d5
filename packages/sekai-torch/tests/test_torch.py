"""The "torch" vectorization mode, on CPU."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import sekai
from sekai.envs.classic_control.kernels.cartpole import CartPoleKernel
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase
from sekai.torch import TorchVecEnv


@pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
def test_the_torch_mode_passes_every_kernel_mode_check(check: Callable[[ModeCase], None]) -> None:
    check(ModeCase("torch", torch.as_tensor, "torch"))


def test_make_vec_torch_gives_tensors_on_the_device() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 4, vectorization_mode="torch", vector_kwargs={"device": "cpu"}
    )
    assert isinstance(envs, TorchVecEnv)
    assert repr(envs) == "TorchVecEnv(CartPole-v1, num_envs=4, backend=torch, float32, device=cpu)"
    first = envs.reset(seed=0)
    assert isinstance(first.observations, torch.Tensor) and first.observations.shape == (4, 4)
    step = envs.step(torch.ones(4, dtype=torch.int64))
    assert step.observations.dtype == torch.float32 and step.rewards.dtype == torch.float32
    assert step.terminated.dtype == torch.bool and step.infos[0]["elapsed_steps"] == 1
    envs.close()


def test_float64_is_a_vector_kwarg() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 2, vectorization_mode="torch", vector_kwargs={"dtype": "float64"}
    )
    envs.reset(seed=0)
    assert envs.step(np.zeros(2, dtype=np.int64)).rewards.dtype == torch.float64
    assert envs.state["x"].dtype == torch.float64
    with pytest.raises(TypeError, match="torch float dtype"):
        TorchVecEnv(CartPoleKernel(), 2, dtype="int32")


def test_cuda_graph_capture_needs_a_cuda_device() -> None:
    with pytest.raises(ValueError, match="needs a CUDA device"):
        TorchVecEnv(CartPoleKernel(), 2, compile="cuda_graph")
    with pytest.raises(ValueError, match="compile must be one of"):
        TorchVecEnv(CartPoleKernel(), 2, compile="fast")
