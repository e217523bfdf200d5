"""Entry points: ``"module.path:Attr"`` strings or callables, checked and loaded."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["EntryPoint", "check_entry_point", "load_entry_point"]

EntryPoint = str | Callable[..., Any]

_INVALID_ENTRY_POINT = "Invalid {what} {value!r}. Must be 'module.path:ClassName'."


def check_entry_point(value: object, what: str = "entry_point") -> None:
    """Validate an entry point's form without importing anything.

    Args:
        value: a callable, or a string ``"pkg.mod:Attr"`` of dotted identifiers.
        what: the argument name used in the error message.

    Raises:
        TypeError: ``value`` is neither a string nor a callable.
        ValueError: ``value`` is a string of the wrong form.
    """
    if isinstance(value, str):
        module, colon, attr = value.partition(":")
        if not (colon and _dotted(module) and _dotted(attr)):
            raise ValueError(_INVALID_ENTRY_POINT.format(what=what, value=value))
    elif not callable(value):
        raise TypeError(
            f"{what} must be a callable or a 'module.path:ClassName' string, "
            f"got {type(value).__name__}."
        )


def _dotted(text: str) -> bool:
    """Dotted Python identifiers (non-ASCII ones too, as Python itself accepts them)."""
    return all(part.isidentifier() for part in text.split("."))


def load_entry_point(value: EntryPoint, what: str = "entry_point") -> Callable[..., Any]:
    """Return the callable an entry point names, importing its module now if it is a string.

    Raises:
        ValueError: the string has the wrong form.
        ImportError: the module cannot be imported (propagated unchanged).
        AttributeError: the module has no such attribute.
    """
    check_entry_point(value, what)
    if not isinstance(value, str):
        return value
    module_name, _, attr_path = value.partition(":")
    target: Any = importlib.import_module(module_name)
    for attr in attr_path.split("."):
        try:
            target = getattr(target, attr)
        except AttributeError as exc:
            raise AttributeError(
                f"{what} {value!r}: module {module_name!r} has no attribute {attr_path!r}."
            ) from exc
    if not callable(target):
        raise TypeError(f"{what} {value!r} names a {type(target).__name__}, not a callable.")
    return target  # type: ignore[no-any-return]
