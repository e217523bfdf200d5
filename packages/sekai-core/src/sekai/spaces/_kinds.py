"""Kinds of spaces: the array spaces (whose samples are one NumPy array and whose batches stack
them), and the walk through the composite ones (Dict, Tuple) to the spaces they hold."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["ARRAY_SPACES", "fold_leaves", "sub_spaces"]

ARRAY_SPACES = (Box, Discrete, MultiDiscrete, MultiBinary)


def sub_spaces(space: Space[Any]) -> list[Space[Any]] | None:
    """The spaces a Dict or Tuple holds, in order; None for any other space."""
    if isinstance(space, Dict):
        return list(space.values())
    if isinstance(space, Tuple):
        return list(space.spaces)
    return None


def fold_leaves(
    space: Space[Any],
    leaf: Callable[[Space[Any]], bool],
    combine: Callable[[Iterable[bool]], bool],
) -> bool:
    """``leaf(space)`` for a space that is no Dict or Tuple; for one, ``combine`` (``any`` or
    ``all``) of the fold over the spaces it holds, so an empty one gives ``combine([])``."""
    children = sub_spaces(space)
    if children is None:
        return leaf(space)
    return combine(fold_leaves(child, leaf, combine) for child in children)
