"""Each env class's own ``metadata`` dict (Env and MultiAgentEnv share the rule)."""

from __future__ import annotations

import copy

__all__ = ["own_metadata"]


def own_metadata(cls: type) -> None:
    """Give ``cls``, when it declares no ``metadata`` of its own, a shallow copy of the
    inherited dict (of the same dict type), so that an env writing ``self.metadata[...]``
    changes its class's, not every env's. A property (a wrapper's, reading and writing the
    wrapped env's) is left alone."""
    inherited = getattr(cls, "metadata", None)
    if "metadata" not in cls.__dict__ and isinstance(inherited, dict):
        cls.metadata = copy.copy(inherited)  # type: ignore[attr-defined]
