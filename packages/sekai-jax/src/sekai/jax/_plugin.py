"""The ``jax`` plugin: registers the ``"jax"`` vectorization mode (as a string; imports no JAX)."""

from __future__ import annotations

from sekai.plugins import BackendRegistrar, hookimpl

__all__ = ["sekai_register_vector_backends"]


@hookimpl
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register ``make_vec(..., vectorization_mode="jax")`` -> ``JaxVecEnv``."""
    registry.register("jax", "sekai.jax.vec_env:JaxVecEnv")
