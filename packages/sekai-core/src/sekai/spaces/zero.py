"""zero_sample: the canonical "empty" member of a space."""

from __future__ import annotations

from functools import singledispatch
from typing import Any

import numpy as np

from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple

__all__ = ["zero_sample"]


@singledispatch
def zero_sample(space: Space[Any]) -> Any:
    """The zero member of ``space``: Box ``zero()``, ``start`` for discrete spaces, zeros,
    ``empty()`` for a MaskedBox, an empty sequence; Dict/Tuple recursively.

    Raises:
        TypeError: the space type has no registered zero sample.
    """
    raise TypeError(
        f"zero_sample is not defined for {type(space).__name__} spaces; register one with "
        "@sekai.spaces.zero_sample.register."
    )


@zero_sample.register(Box)
def _zero_box(space: Box) -> Any:
    return space.zero()


@zero_sample.register(Discrete)
def _zero_discrete(space: Discrete) -> np.int64:
    value: np.int64 = np.int64(space.start)
    return value


@zero_sample.register(MultiDiscrete)
def _zero_multi_discrete(space: MultiDiscrete) -> Any:
    return space.start.astype(space.dtype)


@zero_sample.register(MultiBinary)
def _zero_multi_binary(space: MultiBinary) -> Any:
    return np.zeros(space.shape, dtype=np.int8)


@zero_sample.register(Dict)
def _zero_dict(space: Dict) -> dict[Any, Any]:
    return {key: zero_sample(child) for key, child in space.items()}


@zero_sample.register(MaskedBox)
def _zero_masked_box(space: MaskedBox) -> dict[str, Any]:
    return space.empty()


@zero_sample.register(Tuple)
def _zero_tuple(space: Tuple) -> tuple[Any, ...]:
    return tuple(zero_sample(child) for child in space.spaces)


@zero_sample.register(Sequence)
def _zero_sequence(space: Sequence) -> Any:
    return space.pack([])
