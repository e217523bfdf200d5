"""The ``ray`` plugin: registers the ``"ray"`` vectorization mode (as a string; imports no Ray)."""

from __future__ import annotations

from sekai.plugins import BackendRegistrar, hookimpl

__all__ = ["sekai_register_vector_backends"]


@hookimpl
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register ``make_vec(..., vectorization_mode="ray")`` -> ``RayVecEnv(env_fns, **kw)``."""
    registry.register("ray", "sekai.ray.vec_env:RayVecEnv")
