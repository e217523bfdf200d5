"""TorchBackend: drives a KernelVecEnv with tensors on a torch device, eager, compiled or
captured in a CUDA graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import array_api_compat.torch as xp_torch
import numpy as np

import torch
from sekai.vector.kernel import Draw
from sekai.vector.kernel_backend import GeneratorBackend, StepFn
from sekai.vector.kernel_step import host_when

if TYPE_CHECKING:
    from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = ["COMPILE_MODES", "FLOAT_DTYPES", "TorchBackend"]

COMPILE_MODES = (None, "compile", "cuda_graph")


def _device(device: Any) -> torch.device:
    """``device`` as a ``torch.device`` that this torch build can use."""
    try:
        checked = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be a torch device or its name ('cpu', 'cuda', 'cuda:1', ...), got "
            f"{device!r} ({str(exc).splitlines()[0]})."
        ) from None
    if checked.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not count:
            raise ValueError(
                f"device {device!r}: torch has no CUDA devices (a CPU build of torch, or no "
                "GPU visible); use device='cpu', or install a CUDA build of torch."
            )
        if checked.index is not None and checked.index >= count:
            raise ValueError(
                f"device {device!r}: the index must be one of 0..{count - 1} "
                f"({count} cuda device(s))."
            )
    return checked


# The float dtypes the torch ops of the kernels and the driver run in and numpy can copy to
# the host (bfloat16 and the float8 types have no numpy dtype, nor random draws).
FLOAT_DTYPES = (torch.float16, torch.float32, torch.float64)


# float16's uniforms: the multiples of 1 / _HALF_STEPS below 1 (its 11 significant bits).
_HALF_STEPS = 2**11


def _float_dtype(dtype: Any) -> torch.dtype:
    named = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
    if named not in FLOAT_DTYPES:
        raise TypeError(
            "dtype must be a torch float dtype the kernels run in, float16, float32 or float64 "
            f"(a torch.dtype or its name), got {dtype!r}."
        )
    return named  # type: ignore[no-any-return,unused-ignore]


class TorchBackend(GeneratorBackend):
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
        self.device = _device(device)
        if compile == "cuda_graph" and self.device.type != "cuda":
            raise ValueError(
                f"compile='cuda_graph' needs a CUDA device, got device={str(self.device)!r}."
            )
        self.xp = xp_torch
        self.float_dtype = _float_dtype(dtype)
        self.compile = compile
        try:
            self.generator = torch.Generator(device=self.device)
        except RuntimeError as exc:  # 'meta' and other devices without random numbers
            raise ValueError(
                f"device {str(self.device)!r}: torch cannot draw random numbers there "
                f"({str(exc).splitlines()[0]}); use 'cpu' or 'cuda'."
            ) from None
        self.generator.seed()

    def convert(self, value: Any) -> torch.Tensor:
        array = np.asarray(value)
        dtype = self.float_dtype if array.dtype.kind == "f" else None
        # A copy (torch.as_tensor would share a CPU array's memory, and warns about the
        # read-only arrays that params hold).
        return torch.tensor(array, dtype=dtype, device=self.device)

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
        # Detached: a policy's output that requires grad would otherwise grow an autograd
        # graph behind the state, step after step (the step is not differentiable API).
        if isinstance(actions, np.ndarray) and not actions.flags.writeable:
            # torch.as_tensor would share the memory, and warns that it is read-only
            actions = actions.copy()
        return torch.as_tensor(actions, device=self.device).detach()

    def is_device_array(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor)

    def synchronize(self, values: Any) -> None:
        # CUDA kernels run after the call that queued them has returned; on the CPU torch
        # computes before returning.
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def _sample(self, draw: Draw, shape: tuple[int, ...]) -> torch.Tensor:
        where = {"generator": self.generator, "device": self.device}
        if draw.distribution == "normal":
            return torch.randn(shape, dtype=self.float_dtype, **where)
        if self.float_dtype == torch.float16:
            # torch rounds a finer uniform to float16 (1.0 to 0), which makes some values of
            # float16's grid likelier than others: the 2**11 multiples of 2**-11 below 1 instead,
            # each as likely (a kernel's digits of them, a window start's, are then uniform).
            steps = torch.randint(0, _HALF_STEPS, shape, dtype=torch.int32, **where)
            return steps.to(torch.float16) * (1.0 / _HALF_STEPS)
        return torch.rand(shape, dtype=self.float_dtype, **where)

    def build_step(self, env: KernelVecEnv) -> StepFn:
        if self.compile == "cuda_graph":
            from sekai.torch._graph import GraphStep

            # A graph cannot branch: the reset runs every step, masked, and draws its noise
            # every step (fixed shapes and launches).
            return GraphStep(self.step_function(env, None, eager=False), self.generator)
        if self.compile == "compile":
            compiler: Any = torch.compiler  # partly untyped
            # The autoreset runs eagerly, in steps where an episode ended (no graph breaks).
            step = self.step_function(env, compiler.disable(host_when), eager=False)
            compiled: StepFn = torch.compile(step, dynamic=False)
            return compiled
        return super().build_step(env)  # the reset (and its noise) only when an episode ended

    def describe(self) -> str:
        mode = "" if self.compile is None else f", compile={self.compile}"
        return f"{str(self.float_dtype).removeprefix('torch.')}, device={self.device}{mode}"
