"""JSON descriptions of spaces: the type registry and ``space_from_jsonable``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sekai.spaces.space import Space

__all__ = ["field_error", "register_space_type", "space_from_jsonable"]

_SPACE_TYPES: dict[str, type[Space[Any]]] = {}


def register_space_type(name: str, cls: type[Space[Any]]) -> None:
    """Make ``space_from_jsonable`` build ``cls`` (``cls.from_jsonable``) for ``{"type": name}``.

    Raises:
        TypeError: ``name`` is not a str or ``cls`` has no ``from_jsonable`` classmethod.
    """
    if not isinstance(name, str):
        raise TypeError(f"Space type names must be str, got {type(name).__name__}.")
    if not isinstance(cls, type) or not callable(getattr(cls, "from_jsonable", None)):
        raise TypeError(
            "register_space_type needs a Space class with a from_jsonable classmethod, "
            f"got {cls!r}."
        )
    _SPACE_TYPES[name] = cls


def space_from_jsonable(d: Mapping[str, Any]) -> Space[Any]:
    """Rebuild any registered space from its ``to_jsonable()`` dict, dispatching on ``d["type"]``.

    Raises:
        ValueError: the type is not registered.
    """
    if not isinstance(d, Mapping) or "type" not in d:
        raise ValueError(f"A space description must be a dict with a 'type' key, got {d!r}.")
    name = d["type"]
    cls = _SPACE_TYPES.get(name)
    if cls is None:
        raise ValueError(
            f"Unknown space type {name!r}. Known types: {sorted(_SPACE_TYPES)}. Register custom "
            "spaces with sekai.spaces.register_space_type()."
        )
    try:
        return cls.from_jsonable(d)
    except KeyError as exc:  # a field the type needs is missing
        raise ValueError(
            f"The {name} description {dict(d)!r} has no {exc.args[0]!r} field, which "
            f"{name}.from_jsonable needs."
        ) from None


def field_error(kind: str, field: str, expected: str, value: Any) -> TypeError:
    """The error for a ``kind`` description whose ``field`` is not ``expected`` (a phrase:
    "a list of space descriptions"), naming the type and value found."""
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return TypeError(
        f"The {field!r} field of a {kind} description must be {expected}, got "
        f"{type(value).__name__} {text}."
    )
