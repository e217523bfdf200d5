"""The seam between the registry and plugin discovery, which sits above it.

The registry asks :func:`create_host` for the plugin host of its default registry;
``sekai/__init__.py`` installs the factory (the plugin host lives in ``sekai.plugins``, above the
registry), so no registry module imports ``sekai.plugins``. ``import sekai`` runs before any
``sekai.*`` module, so the factory is always installed when the registry first needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["create_host", "install_host_factory"]

_factory: Callable[[Any], Any] | None = None


def install_host_factory(factory: Callable[[Any], Any]) -> None:
    """Make ``factory(registry)`` the builder of the default registry's plugin host."""
    global _factory
    _factory = factory


def create_host(registry: Any) -> Any:
    """Build the plugin host for ``registry`` with the installed factory.

    Raises:
        RuntimeError: no factory is installed (``sekai`` was not imported as a package).
    """
    if _factory is None:
        raise RuntimeError(
            "sekai's plugin discovery is not installed: import the sekai package, not its "
            "modules from a copied source tree."
        )
    return _factory(registry)
