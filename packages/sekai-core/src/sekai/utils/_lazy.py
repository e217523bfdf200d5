"""Lazy package exports: a module ``__getattr__``/``__dir__`` pair over a name -> module table."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any],
    names: Mapping[str, str],
    *,
    submodules: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build the PEP 562 ``__getattr__`` and ``__dir__`` of a package that exports names lazily.

    A package ``__init__`` stays cheap (plugins import it, ``import sekai`` must not pull in env
    code) by writing ``__getattr__, __dir__ = lazy_exports(globals(), _LAZY)`` under
    ``if not TYPE_CHECKING:`` and importing the same names under ``if TYPE_CHECKING:``. A module
    ``__getattr__`` that type checkers see would make every unknown name of the package ``Any``.

    Args:
        namespace: the package's ``globals()``; a name is stored there once loaded, so later
            accesses are plain attribute lookups.
        names: attribute name -> module that defines it (the value is ``module.<name>``).
        submodules: attribute name -> module returned as the attribute itself (not stored).

    A module that is absent (a name's or a submodule's) raises ``AttributeError``, so ``hasattr``
    stays safe; a library missing inside a module that is there propagates.

    Returns:
        ``(__getattr__, __dir__)`` for the package's module namespace.
    """
    package = namespace["__name__"]
    modules: Mapping[str, str] = submodules if submodules is not None else {}

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is not None:
            try:
                value = getattr(importlib.import_module(module), name)
            except ModuleNotFoundError as exc:
                if not _absent(module, exc):
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from exc
            namespace[name] = value
            return value
        submodule = modules.get(name)
        if submodule is not None:
            try:
                return importlib.import_module(submodule)
            except ModuleNotFoundError as exc:
                if not _absent(submodule, exc):
                    raise
                raise AttributeError(str(exc)) from exc  # the finder's install hint, if any
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *names, *modules})

    return __getattr__, __dir__


def _absent(module: str, exc: ModuleNotFoundError) -> bool:
    """Whether ``exc`` says ``module`` itself (or a package above it) is not installed, rather
    than a library it imports."""
    return exc.name is not None and (module + ".").startswith(exc.name + ".")
