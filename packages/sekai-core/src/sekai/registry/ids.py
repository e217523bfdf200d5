"""Environment IDs: parse and format ``[namespace/]Name[-vN]``."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["ENV_ID_RE", "NAMESPACE_RE", "ParsedId", "format_env_id", "parse_env_id"]

NAMESPACE_RE = re.compile(r"[a-zA-Z0-9_-]+")
"""What a namespace may hold (a third-party plugin's entry-point name is its namespace)."""

ENV_ID_RE = re.compile(
    rf"^(?:(?P<namespace>{NAMESPACE_RE.pattern})/)?(?P<name>[a-zA-Z0-9_-]+?)"
    r"(?:-v(?P<version>\d+))?$"
)

_INVALID_ID = (
    "Invalid env ID {id!r}. Must match [namespace/]Name[-vN] "
    "(e.g. 'CartPole-v1', 'qc/MarketEnv-v0')."
)


class ParsedId(NamedTuple):
    """The parts of an environment ID."""

    namespace: str | None
    name: str
    version: int | None


def parse_env_id(env_id: str) -> ParsedId:
    """Split an ID into ``(namespace, name, version)``.

    Args:
        env_id: an ID such as ``"CartPole-v1"`` or ``"qc/MarketEnv-v0"``.

    Returns:
        ``ParsedId(namespace, name, version)``; namespace and version may be None.

    Raises:
        TypeError: ``env_id`` is not a string.
        ValueError: ``env_id`` does not match ``[namespace/]Name[-vN]``.
    """
    if not isinstance(env_id, str):
        raise TypeError(f"An env ID must be a str, got {type(env_id).__name__}.")
    match = ENV_ID_RE.fullmatch(env_id)
    if match is None:
        raise ValueError(_INVALID_ID.format(id=env_id))
    version = match.group("version")
    return ParsedId(
        match.group("namespace"), match.group("name"), int(version) if version else None
    )


def format_env_id(namespace: str | None, name: str, version: int | None) -> str:
    """Join the parts of an ID: the inverse of ``parse_env_id``."""
    env_id = name if version is None else f"{name}-v{version}"
    return env_id if namespace is None else f"{namespace}/{env_id}"
