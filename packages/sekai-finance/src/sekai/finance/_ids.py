"""The names and ids MarketData takes: mappings of named arrays and lists of asset ids."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sekai._args import check_ordered

__all__ = ["asset_ids", "id_list", "named"]


def named(name: str, value: object, what: str) -> dict[str, Any]:
    """``value`` (a mapping of str name -> ``what``, or None) as a new dict; ``TypeError``
    naming ``name`` otherwise."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of name -> {what}, got {type(value).__name__}.")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{name} must map str names, got a {type(key).__name__} key {key!r}.")
    return dict(value)


def id_list(owner: str, name: str, value: object, what: str = "asset id") -> list[Any]:
    """One ``what`` (a str) or an ordered iterable of hashable ones, as a list; ``TypeError``
    starting with ``owner`` and naming ``name`` otherwise (a set too: it has no order)."""
    if isinstance(value, str):
        return [value]
    check_ordered(owner, name, value)
    if not isinstance(value, Iterable):
        raise TypeError(
            f"{owner}: {name} takes one {what} or an iterable of {what}s, "
            f"got {type(value).__name__}."
        )
    ids = list(value)
    for i in ids:
        try:
            hash(i)
        except TypeError:
            raise TypeError(
                f"{owner}: each {what} in {name} must be hashable, got {type(i).__name__} {i!r}."
            ) from None
    return ids


def asset_ids(assets: object, n_assets: int) -> tuple[Any, ...]:
    """``assets`` (None: ``"asset_0", ...``) as ``n_assets`` unique ids; ``ValueError`` naming
    ``assets`` for another count, a missing id (None, NaN) or a repeated one."""
    if assets is None:
        return tuple(f"asset_{i}" for i in range(n_assets))
    ids = id_list("MarketData", "assets", assets)
    if len(ids) != n_assets:
        raise ValueError(f"assets has {len(ids)} ids for {n_assets} price columns.")
    no_id = [i for i, a in enumerate(ids) if _missing(a)]
    if no_id:
        raise ValueError(
            f"assets has a missing id (None or NaN) at position(s) {no_id}: got {ids}; every "
            "price column needs an id."
        )
    if len(set(map(str, ids))) != len(ids):
        raise ValueError(f"asset ids must be unique, got {ids}.")
    return tuple(ids)


def _missing(value: object) -> bool:
    """None, a value unequal to itself (NaN, NaT) or neither equal nor unequal (pandas' NA)."""
    try:
        return value is None or bool(value != value)
    except TypeError:
        return True
