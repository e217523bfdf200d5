"""Import an env's module first, so that a failing import names the env and its distribution."""

from __future__ import annotations

import importlib

from sekai.cli._args import UsageError

__all__ = ["import_env_module"]


def import_env_module(env_id: str) -> None:
    """Import the module of ``env_id``'s entry point.

    Raises:
        EnvNotFound: ``env_id`` is not registered.
        UsageError: the module raised while being imported (any exception), naming the env ID,
            the entry point and the plugin and distribution that registered it.
    """
    from sekai.registry import spec

    env_spec = spec(env_id)
    entry_point = env_spec.entry_point
    if not isinstance(entry_point, str):
        return  # a callable: its module is already imported
    try:
        importlib.import_module(entry_point.partition(":")[0])
    except Exception as exc:
        source = env_spec.source
        if source is None:
            owner, fix = "registered at runtime, not by a plugin", "Fix that module."
        else:
            owner = (
                f"registered by plugin {source.plugin!r} ({source.distribution} {source.version})"
            )
            fix = f"Fix or reinstall {source.distribution}, or report it to its maintainers."
        raise UsageError(
            f"cannot import the module of {env_id} (entry point {entry_point!r}, {owner}): "
            f"{type(exc).__name__}: {exc}. {fix}"
        ) from exc
