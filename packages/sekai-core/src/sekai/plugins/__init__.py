"""The plugin API: ``hookimpl`` for plugin modules and ``report()`` on what discovery loaded.

A plugin is a module named by an entry point in the ``sekai`` group; its hook implementations
register environments and vectorization modes as strings, so loading it imports no env code::

    from sekai.plugins import hookimpl

    @hookimpl
    def sekai_register_envs(registry):
        registry.register("example/Gridworld-v0", "sekai_example_pack.gridworld:GridworldEnv")
"""

from __future__ import annotations

import pluggy

from sekai.plugins._registrars import BackendRegistrar, EnvRegistrar
from sekai.registry.provenance import FailureStage, PluginFailure, PluginInfo, PluginReport

__all__ = [
    "BackendRegistrar",
    "EnvRegistrar",
    "FailureStage",
    "PluginFailure",
    "PluginInfo",
    "PluginReport",
    "hookimpl",
    "report",
]

hookimpl = pluggy.HookimplMarker("sekai")
"""Marks a function of a plugin module as the implementation of a ``sekai_*`` hook."""


def report() -> PluginReport:
    """Discover plugins if that has not happened yet and describe the outcome."""
    from sekai.registry.api import default_registry

    return default_registry().plugin_report()
