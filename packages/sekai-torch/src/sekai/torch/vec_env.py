"""TorchVecEnv: the ``"torch"`` vectorization mode (a KernelVecEnv on a TorchBackend)."""

from __future__ import annotations

from typing import Any

import torch
from sekai.torch.backend import TorchBackend
from sekai.vector.kernel import ArrayKernel
from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = ["TorchVecEnv"]


class TorchVecEnv(KernelVecEnv):
    """A vector env whose kernel runs on torch tensors: observations, rewards and flags are
    tensors on ``device``.

    ``reset(seed=s)`` seeds a numpy generator as a native env does and seeds the backend's
    ``torch.Generator`` (on ``device``) with one draw from it, ``int(rng.integers(2**63))``.

    Args:
        kernel: the env's kernel.
        num_envs: number of sub-envs.
        device: a torch device or its name (default ``"cpu"``).
        dtype: the float dtype (default float32).
        compile: None (eager, default), ``"compile"`` (``torch.compile``) or ``"cuda_graph"``
            (capture the step once in a CUDA graph; CUDA only).
        autoreset, max_episode_steps, check_actions: as for ``KernelVecEnv``.
    """

    def __init__(
        self,
        kernel: ArrayKernel[Any],
        num_envs: int,
        *,
        device: Any = "cpu",
        dtype: Any = torch.float32,
        compile: str | None = None,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
        check_actions: bool = True,
    ) -> None:
        super().__init__(
            kernel,
            num_envs,
            backend=TorchBackend(device, dtype, compile),
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
            check_actions=check_actions,
        )

    @classmethod
    def cpu_backend(cls, dtype: str = "float64") -> TorchBackend:
        """An eager torch backend on the CPU in ``dtype``."""
        return TorchBackend("cpu", dtype)
