"""The ``torch`` plugin: registers the ``"torch"`` vectorization mode (imports no torch)."""

from __future__ import annotations

from sekai.plugins import BackendRegistrar, hookimpl

__all__ = ["sekai_register_vector_backends"]


@hookimpl
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register ``make_vec(..., vectorization_mode="torch")`` -> ``TorchVecEnv``."""
    registry.register("torch", "sekai.torch.vec_env:TorchVecEnv")
