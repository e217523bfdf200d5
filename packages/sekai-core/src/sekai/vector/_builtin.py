"""Core's built-in vectorization modes, as entry-point strings (registered by ``sekai.plugins``)."""

from __future__ import annotations

__all__ = ["BACKENDS"]

# Strings, so that discovery imports no vector backend module.
BACKENDS: dict[str, str] = {
    "sync": "sekai.vector.sync_vec_env:SyncVecEnv",
    "async": "sekai.vector.async_vec_env:AsyncVecEnv",
    "proc": "sekai.vector.proc.vec_env:ProcVecEnv",
}
