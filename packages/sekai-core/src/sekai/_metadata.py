"""importlib.metadata for every supported Python (the importlib_metadata backport below 3.12)."""

from __future__ import annotations

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
    "distribution",
    "distributions",
    "entry_points",
    "installed_version",
    "version",
]


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None
