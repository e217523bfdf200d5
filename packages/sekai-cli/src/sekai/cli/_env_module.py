"""Import the modules an env command builds with first, so that a failing import names the env,
the entry point and the distribution that registered it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sekai.cli._args import UsageError

if TYPE_CHECKING:
    from sekai.registry.spec import EntryPoint, EnvSpec

__all__ = ["NATIVE_MODES", "import_env_modules"]

# make_vec's names of the native mode.
NATIVE_MODES = ("native", "vector_entry_point")


def import_env_modules(env_id: str, *, vector: bool = False) -> None:
    """Import the modules of ``env_id``'s entry point and of its ``additional_wrappers`` (what
    ``make()`` imports) and, with ``vector``, of its ``vector_entry_point``.

    Raises:
        EnvNotFound: ``env_id`` is not registered.
        UsageError: a module raised while being imported (any exception), naming the env ID,
            the entry point and the plugin and distribution that registered it.
    """
    from sekai.registry import spec

    env_spec = spec(env_id)
    _import(env_spec, env_id, "entry point", env_spec.entry_point)
    for wrapper in env_spec.additional_wrappers:
        what = f"wrapper {wrapper.name!r} of {env_id}"
        _import(env_spec, what, "entry point", wrapper.entry_point)
    if vector and env_spec.vector_entry_point is not None:
        what = f"the native vector env of {env_id}"
        _import(env_spec, what, "vector_entry_point", env_spec.vector_entry_point)


def _import(env_spec: EnvSpec, what: str, field: str, entry_point: EntryPoint | None) -> None:
    if not isinstance(entry_point, str):
        return  # a callable: its module is already imported (None: nothing to import)
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
            f"cannot import the module of {what} ({field} {entry_point!r}, {owner}): "
            f"{type(exc).__name__}: {exc}. {fix}"
        ) from exc
