"""``structurally_equal`` for ``sekai.utils`` (defined below core, in ``sekai._equal``)."""

from __future__ import annotations

from sekai._equal import structurally_equal

__all__ = ["structurally_equal"]
