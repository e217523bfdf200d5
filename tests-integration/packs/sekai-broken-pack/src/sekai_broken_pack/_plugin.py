"""A sekai plugin whose import fails: it needs a module that does not exist (on purpose)."""

from __future__ import annotations

import not_a_real_dependency  # type: ignore[import-not-found]  # noqa: F401

from sekai.plugins import EnvRegistrar, hookimpl


@hookimpl
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Never reached: the import above fails first."""
    registry.register("broken/Thing-v0", "sekai_broken_pack.things:Thing")
