"""Core's built-in plugin: registers the ``sync``, ``async`` and ``proc`` vectorization modes."""

from __future__ import annotations

from sekai.plugins import hookimpl
from sekai.plugins._registrars import BackendRegistrar
from sekai.vector._builtin import BACKENDS

__all__ = ["sekai_register_vector_backends"]


@hookimpl
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register core's three backends (the host loads this plugin before any entry point)."""
    for mode, entry_point in BACKENDS.items():
        registry.register(mode, entry_point)
