"""Pickling and copying of ``__slots__`` classes with every pickle protocol.

Protocols 0 and 1 refuse an object whose class defines ``__slots__`` unless the class defines
``__getstate__`` itself (``object``'s, from Python 3.11, does not count); protocols 2 and up,
``copy`` and ``deepcopy`` read the slots without it. ``Slotted.__getstate__`` gives the state
they read, ``(__dict__ or None, {slot: value})``, which pickle and copy restore without a
``__setstate__``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Slotted"]


class Slotted:
    """A base for classes with ``__slots__`` whose instances pickle with every protocol."""

    __slots__ = ()

    def __getstate__(self) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The ``__dict__`` of a subclass without ``__slots__`` (None for the others), and
        every slot that is set, by name."""
        names = _slots(type(self))
        slots = {name: getattr(self, name) for name in names if hasattr(self, name)}
        return getattr(self, "__dict__", None) or None, slots


def _slots(cls: type) -> list[str]:
    """The names of the slots of ``cls`` and its bases, private ones mangled as Python does."""
    names: list[str] = []
    for klass in cls.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            names.append(name)
    return names
