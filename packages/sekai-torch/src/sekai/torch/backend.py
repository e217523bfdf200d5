"""TorchBackend: drives a KernelVecEnv with tensors on a torch device, eager, compiled or
captured in a CUDA graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import array_api_compat.torch as xp_torch
import numpy as np

import torch
from sekai.vector.kernel import Draw
from sekai.vector.kernel_backend import KernelBackend, ResetFn, StepFn
from sekai.vector.kernel_step import (
    KernelReset,
    KernelTransition,
    draw_all,
    host_when,
    initial,
    transition,
)

if TYPE_CHECKING:
    from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = ["COMPILE_MODES", "TorchBackend"]

COMPILE_MODES = (None, "compile", "cuda_graph")


def _float_dtype(dtype: Any) -> torch.dtype:
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype, None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"dtype must be a torch float dtype or its name ('float32', 'float64'), got {dtype!r}."
        )
    return dtype


class TorchBackend(KernelBackend):
    """PyTorch: tensors on ``device``, random numbers from one ``torch.Generator`` there.

    Args:
        device: a torch device or its name (default ``"cpu"``).
        dtype: the float dtype (default float32; float64 for bit-level comparisons).
        compile: None (eager), ``"compile"`` (``torch.compile`` of the step) or
            ``"cuda_graph"`` (the step captured once in a CUDA graph and replayed; CUDA only).
    """

    name = "torch"

    def __init__(
        self, device: Any = "cpu", dtype: Any = torch.float32, compile: str | None = None
    ) -> None:
        if compile not in COMPILE_MODES:
            raise ValueError(f"compile must be one of {COMPILE_MODES}, got {compile!r}.")
        self.device = torch.device(device)
        if compile == "cuda_graph" and self.device.type != "cuda":
            raise ValueError(
                f"compile='cuda_graph' needs a CUDA device, got device={str(self.device)!r}."
            )
        self.xp = xp_torch
        self.float_dtype = _float_dtype(dtype)
        self.compile = compile
        self.generator = torch.Generator(device=self.device)
        self.generator.seed()

    def convert(self, value: Any) -> torch.Tensor:
        array = np.asarray(value)
        dtype = self.float_dtype if array.dtype.kind == "f" else None
        return torch.as_tensor(array, dtype=dtype, device=self.device)

    def to_numpy(self, value: Any) -> np.ndarray:
        return value.detach().cpu().numpy()  # type: ignore[no-any-return]

    def numpy_dtype(self, dtype: np.dtype[Any]) -> Any:
        native = torch.from_numpy(np.zeros(0, dtype=dtype)).dtype
        if native.is_floating_point and native.itemsize > self.float_dtype.itemsize:
            return self.float_dtype
        return native

    def seed(self, generator: np.random.Generator) -> None:
        self.generator.manual_seed(int(generator.integers(2**63)))

    def actions(self, actions: Any) -> torch.Tensor:
        return torch.as_tensor(actions, device=self.device)

    def _sample(self, draw: Draw, shape: tuple[int, ...]) -> torch.Tensor:
        sample = torch.rand if draw.distribution == "uniform" else torch.randn
        return sample(shape, generator=self.generator, device=self.device, dtype=self.float_dtype)

    def build_reset(self, env: KernelVecEnv) -> ResetFn:
        kernel, n = env.kernel, env.num_envs

        def reset(params: Any) -> KernelReset:
            draws = draw_all(kernel.reset_draws(params), n, self._sample)
            return initial(
                kernel,
                self.xp,
                params,
                draws,
                n,
                autoreset=env.autoreset,
                observation_dtype=env.observation_dtype,
                device=self.device,
            )

        return reset

    def build_step(self, env: KernelVecEnv) -> StepFn:
        kernel, n = env.kernel, env.num_envs
        when: Any = host_when  # the reset only in steps where an episode ended (one sync)
        if self.compile == "cuda_graph":
            when = None  # a graph cannot branch: the reset runs every step, masked
        elif self.compile == "compile":
            compiler: Any = torch.compiler  # partly untyped
            when = compiler.disable(host_when)  # run eagerly: no graph-break warnings

        def step(params: Any, carry: Any, action: Any) -> KernelTransition:
            return transition(
                kernel,
                self.xp,
                params,
                carry,
                action,
                draw_all(kernel.step_draws(params), n, self._sample),
                draw_all(kernel.reset_draws(params), n, self._sample),
                max_episode_steps=env.max_episode_steps,
                autoreset=env.autoreset,
                observation_dtype=env.observation_dtype,
                when=when,
            )

        if self.compile == "compile":
            compiled: StepFn = torch.compile(step, dynamic=False)
            return compiled
        if self.compile == "cuda_graph":
            from sekai.torch._graph import GraphStep

            return GraphStep(step, self.generator)
        return step

    def describe(self) -> str:
        mode = "" if self.compile is None else f", compile={self.compile}"
        return f"{str(self.float_dtype).removeprefix('torch.')}, device={self.device}{mode}"
