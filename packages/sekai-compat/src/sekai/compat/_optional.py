"""Import the optional libraries the bridges need, or raise MissingDependency naming the fix."""

from __future__ import annotations

import importlib
import re
from types import ModuleType

from sekai.error import MissingDependency

__all__ = ["require_gymnasium", "require_pettingzoo", "require_sb3"]

_NEEDS = "{func} needs {requirement}, which is not installed: pip install {install}"
# A gymnasium installed before the extra (or pinned) may be older than a function needs, and
# some functions need less than the extra's floor: the fix names the function's requirement.
_TOO_OLD = "{func} needs {requirement}, found {package} {version}: pip install -U '{requirement}'"
_GYMNASIUM_EXTRA = "'sekai-compat[gymnasium]'"
_PETTINGZOO_EXTRA = "'sekai-compat[pettingzoo]'"
# SB3 has no extra: it would pull an unpinned torch (core.md §15).
_SB3_INSTALL = "stable-baselines3"


def _version_tuple(version: str) -> tuple[int, ...]:
    """``"1.2.3rc1"`` -> ``(1, 2, 3)``: the leading numeric release segments."""
    parts: list[int] = []
    for piece in version.split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        parts.append(int(match.group()))
        if match.end() != len(piece):
            break
    return tuple(parts)


def _import(
    func: str,
    module: str,
    *,
    package: str,
    minimum: str,
    install: str,
    extra: str | None,
) -> ModuleType:
    requirement = f"{package}>={minimum}"
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        message = _NEEDS.format(func=func, requirement=requirement, install=install)
        raise MissingDependency(message, package=package, extra=extra) from exc
    version = str(getattr(mod, "__version__", "0"))
    if _version_tuple(version) < _version_tuple(minimum):
        message = _TOO_OLD.format(
            func=func, requirement=requirement, package=package, version=version
        )
        raise MissingDependency(message, package=package, extra=extra)
    return mod


def require_gymnasium(func: str, minimum: str = "1.0") -> ModuleType:
    """Return the ``gymnasium`` module, checking its version.

    Args:
        func: the public function that needs it, as the message shows it (``"to_gymnasium()"``).
        minimum: the oldest gymnasium release that works.

    Raises:
        sekai.MissingDependency: gymnasium is absent or older than ``minimum``, e.g.
            ``to_gymnasium() needs gymnasium>=1.0, which is not installed: pip install
            'sekai-compat[gymnasium]'``.
    """
    return _import(
        func,
        "gymnasium",
        package="gymnasium",
        minimum=minimum,
        install=_GYMNASIUM_EXTRA,
        extra="gymnasium",
    )


def require_pettingzoo(func: str, minimum: str = "1.24") -> ModuleType:
    """Return the ``pettingzoo`` module (and check gymnasium, which its spaces come from).

    Raises:
        sekai.MissingDependency: pettingzoo or gymnasium is absent or too old; the message
            names ``pip install 'sekai-compat[pettingzoo]'``.
    """
    _import(
        func,
        "gymnasium",
        package="gymnasium",
        minimum="1.0",
        install=_PETTINGZOO_EXTRA,
        extra="pettingzoo",
    )
    return _import(
        func,
        "pettingzoo",
        package="pettingzoo",
        minimum=minimum,
        install=_PETTINGZOO_EXTRA,
        extra="pettingzoo",
    )


def require_sb3(func: str, minimum: str = "2.0") -> ModuleType:
    """Return the ``stable_baselines3`` module.

    Raises:
        sekai.MissingDependency: stable-baselines3 (or gymnasium, which installing it brings) is
            absent or too old; the message names ``pip install stable-baselines3`` (there is no
            extra, whose unpinned torch would be a multi-gigabyte download).
    """
    return _import(
        func,
        "stable_baselines3",
        package="stable-baselines3",
        minimum=minimum,
        install=_SB3_INSTALL,
        extra=None,
    )
