"""Array kernels of registered envs: the kernel a spec names, built with the env's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sekai.registry.entry_points import load_entry_point
from sekai.vector.kernel import ArrayKernel

__all__ = ["kernel_entry_point", "load_kernel"]


def kernel_entry_point(spec: Any) -> Any:
    """The ``kernel_entry_point`` of a spec.

    Raises:
        ValueError: the spec names no kernel.
    """
    entry = getattr(spec, "kernel_entry_point", None)
    if entry is None:
        raise ValueError(
            f"{spec.id} has no array kernel (kernel_entry_point), which the kernel "
            "vectorization modes ('jax', 'torch') need; use 'native', 'sync', 'async' or 'proc'."
        )
    return entry


def load_kernel(spec: Any, kwargs: Mapping[str, Any]) -> ArrayKernel[Any]:
    """Build the kernel a spec names (``kernel_entry_point``) with the env's keyword arguments.

    Raises:
        ValueError: the spec names no kernel.
        TypeError: the entry point does not build an ``ArrayKernel``.
    """
    factory = load_entry_point(kernel_entry_point(spec), "kernel_entry_point")
    kernel = factory(**kwargs)
    if not isinstance(kernel, ArrayKernel):
        raise TypeError(
            f"kernel_entry_point of {spec.id} built a {type(kernel).__name__}, not an ArrayKernel."
        )
    return kernel
