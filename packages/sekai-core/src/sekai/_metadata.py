"""importlib.metadata for every supported Python (the importlib_metadata backport below 3.12)."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys

# The stdlib module gained the selectable, de-duplicated entry_points() API we rely on in 3.12;
# below that the backport (a declared dependency) provides the same API.
if sys.version_info >= (3, 12):
    from importlib.metadata import (
        Distribution,
        EntryPoint,
        PackageNotFoundError,
        distribution,
        distributions,
        entry_points,
        version,
    )
else:
    from importlib_metadata import (
        Distribution,
        EntryPoint,
        PackageNotFoundError,
        distribution,
        distributions,
        entry_points,
        version,
    )

__all__ = [
    "Distribution",
    "EntryPoint",
    "PackageNotFoundError",
    "declared_requirement",
    "distribution",
    "distributions",
    "entry_points",
    "installed_version",
    "missing_requirements",
    "pip_install",
    "requirement_name",
    "version",
]


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


# The distribution name a requirement starts with (PEP 508), before any extras or version.
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def missing_requirements(name: str) -> tuple[str, ...]:
    """The dependencies distribution ``name`` declares that are not installed, as its metadata
    writes them (``("ray>=2.9",)``): a plugin installed with ``pip install --no-deps``, or whose
    library was uninstalled later.

    Only unconditional requirements count (one with an extra or an environment marker is skipped,
    so no marker is evaluated), and one counts as installed when its distribution is, or when a
    module of its name is found without metadata (a library put on ``sys.path`` by hand). Nothing
    is imported. ``()`` when ``name`` itself is not installed.
    """
    missing: list[str] = []
    for text, dependency, module in _unconditional_requirements(name):
        importable = (
            sys.modules.get(module) is not None or importlib.util.find_spec(module) is not None
        )
        if installed_version(dependency) is None and not importable:
            missing.append(text)
    return tuple(missing)


def declared_requirement(name: str, module: str) -> str | None:
    """The requirement distribution ``name`` declares for the library imported as ``module``,
    as its metadata writes it (``"ray>=2.9"`` for sekai-ray's ``ray``); None when it declares
    none unconditionally, or is not installed."""
    for text, _, importable_as in _unconditional_requirements(name):
        if importable_as == module:
            return text
    return None


def _unconditional_requirements(name: str) -> list[tuple[str, str, str]]:
    """``(requirement, distribution, module)`` of each dependency distribution ``name``
    declares without an extra or an environment marker (``("ray>=2.9", "ray", "ray")``); the
    module is the distribution's name as an import name. Empty when ``name`` is not installed."""
    try:
        requires = distribution(name).requires or []
    except PackageNotFoundError:
        return []
    found: list[tuple[str, str, str]] = []
    for requirement in requires:
        text, conditional, _ = requirement.partition(";")
        dependency = requirement_name(text)
        if not conditional and dependency is not None:
            found.append((text.strip(), dependency, re.sub(r"[-.]", "_", dependency)))
    return found


def requirement_name(requirement: str) -> str | None:
    """The distribution a requirement names: ``"ray"`` for ``"ray[default]>=2.9"``."""
    found = _REQUIREMENT_NAME.match(requirement)
    return found.group(1) if found is not None else None


def pip_install(*requirements: str) -> str:
    """The shell command installing ``requirements``: ``pip install 'ray>=2.9'``."""
    return "pip install " + " ".join(shlex.quote(r) for r in requirements)
