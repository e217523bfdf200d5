"""The hooks a sekai plugin module may implement (each prefixed ``sekai_``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from sekai.plugins._registrars import BackendRegistrar, EnvRegistrar

__all__ = ["hookspec", "sekai_register_envs", "sekai_register_vector_backends"]

hookspec = pluggy.HookspecMarker("sekai")


@hookspec(historic=True)
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Register this plugin's environments with ``registry.register(...)``.

    Called once per plugin, during discovery (the first registry operation of the process), with
    the plugin attributed as the source of everything it registers. Entry points must be
    ``"module.path:Attr"`` strings so that no env module is imported before ``make()``.
    Third-party plugins may only register IDs in their own namespace (``<plugin name>/...``).
    Raising skips the plugin (its registrations are removed) with a ``PluginLoadWarning``.
    """


@hookspec(historic=True)
def sekai_register_vector_backends(registry: BackendRegistrar) -> None:
    """Register extra vectorization modes: ``registry.register("ray", "pkg.mod:RayVecEnv")``.

    Called once per plugin, during discovery. A backend is a class (or factory) called as
    ``Cls(env_fns, **vector_kwargs)`` with a list of zero-argument env factories, returning a
    VecEnv; ``make_vec(..., vectorization_mode=<mode>)`` then uses it. Raising skips the plugin.
    """
