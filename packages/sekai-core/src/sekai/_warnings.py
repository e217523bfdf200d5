"""Where sekai's warnings point: the user's line, however deep in sekai they are raised."""

from __future__ import annotations

import sys

__all__ = ["caller_stacklevel"]


def caller_stacklevel() -> int:
    """The ``stacklevel`` with which a ``warnings.warn`` in the function calling this one names
    the first frame outside sekai (the user's code, wherever in sekai the call went through)."""
    level = 1  # the calling function itself
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "sekai" and not module.startswith("sekai."):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 2  # sekai all the way up (an import of sekai): its caller, as warn's usual level
