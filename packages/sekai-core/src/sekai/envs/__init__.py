"""The joint package of sekai environments; env distributions add subpackages here.

``sekai.envs.<Name>`` finds ``Name`` in the ``__all__`` of the installed ``sekai.envs.<sub>``
packages (imported in sorted order, on first access); core names no environment itself. Type
checkers see the names of the first-party env packages through star imports of them (so a
misspelt name is an error); a third-party package's are imported from it.
"""

from __future__ import annotations

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any


def _subpackages() -> list[str]:
    return sorted(
        {info.name for info in pkgutil.iter_modules(__path__) if info.ispkg} - {"__pycache__"}
    )


# Hidden from type checkers, which would type every unknown name (a typo) as Any: they see the
# star imports below.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        return _find(name)


def _find(name: str) -> Any:
    """The first installed ``sekai.envs.<sub>`` package's ``name``, cached in this module."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    installed = _subpackages()
    errors: list[str] = []
    for sub in installed:
        if sub.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{__name__}.{sub}")
        except ImportError as exc:
            # A broken env package must not hide the names every other one exports.
            errors.append(f"{__name__}.{sub} failed to import ({type(exc).__name__}: {exc})")
            continue
        if name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            globals()[name] = value
            return value
    message = f"module {__name__!r} has no attribute {name!r}"
    from sekai._providers import install_command, provider_of_export

    provider = provider_of_export(name)
    if provider is not None and not any(
        m.startswith(f"{__name__}.") and m.rpartition(".")[2] in installed for m in provider.modules
    ):
        dist = provider.distribution
        message += (
            f": it is provided by {dist}, which is not installed. "
            f"Install it with: {install_command(dist)}"
        )
    if errors:
        message += "; " + "; ".join(errors)
    raise AttributeError(message)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    # Each first-party env package's __all__ (sekai._providers lists them), in the lookup's order.
    from sekai.envs.classic_control import *  # noqa: F403
    from sekai.envs.finance import *  # noqa: F403
