"""JaxVecEnv: the ``"jax"`` vectorization mode (a KernelVecEnv on a JaxBackend)."""

from __future__ import annotations

from typing import Any

from sekai.jax.backend import JaxBackend
from sekai.vector.kernel import ArrayKernel
from sekai.vector.kernel_vec_env import KernelVecEnv

__all__ = ["JaxVecEnv"]


class JaxVecEnv(KernelVecEnv):
    """A vector env whose kernel runs in jitted JAX: observations, rewards and flags are
    ``jax.Array``s (float64 with ``jax_enable_x64``, else float32).

    ``reset(seed=s)`` seeds a numpy generator as a native env does and starts the JAX key from
    two uint32 words drawn from it (``sekai.jax.key_from_generator``: a threefry key, whatever
    ``jax_default_prng_impl`` says); each call splits the key.

    Args:
        kernel: the env's kernel.
        num_envs: number of sub-envs.
        device: a ``jax.Device`` (None: JAX's default).
        dtype: None, or the float dtype ``jax_enable_x64`` gives (float64 on, float32 off);
            another is refused with the setting that gives it.
        autoreset, max_episode_steps, check_actions: as for ``KernelVecEnv``.
    """

    def __init__(
        self,
        kernel: ArrayKernel[Any],
        num_envs: int,
        *,
        device: Any = None,
        dtype: Any = None,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
        check_actions: bool = True,
    ) -> None:
        super().__init__(
            kernel,
            num_envs,
            backend=JaxBackend(device, dtype),
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
            check_actions=check_actions,
        )

    @classmethod
    def cpu_backend(cls, dtype: str = "float64") -> JaxBackend:
        """A JAX backend on the default device in ``dtype``, which must be the one
        ``jax_enable_x64`` gives (another is refused with the setting that gives it)."""
        return JaxBackend(dtype=dtype)
