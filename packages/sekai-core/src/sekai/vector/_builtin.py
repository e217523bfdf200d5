"""Core's built-in plugin: the ``sync``, ``async`` and ``proc`` vectorization modes."""

from __future__ import annotations

from sekai.plugins import BackendRegistrar, hookimpl

__all__ = ["BACKENDS", "sekai_register_vector_backends"]

# Strings, so that discovery imports no vector backend module.
BACKENDS: dict[str, str] = {
    "sync": "sekai.vector.sync_vec_env:SyncVecEnv",
    "async": "sekai.vector.async_vec_env:AsyncVecEnv",
    "proc": "sekai.vector.proc.vec_env:ProcVecEnv",
}


@hookimpl
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register core's three backends (the host loads this plugin before any entry point)."""
    for mode, entry_point in BACKENDS.items():
        registry.register(mode, entry_point)
