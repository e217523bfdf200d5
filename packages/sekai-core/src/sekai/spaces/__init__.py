"""Spaces: the sets observations and actions live in, and utilities to flatten and batch them.

The utilities are also ``sekai.space_utils``. Every utility is a ``functools.singledispatch``
function: custom spaces register implementations, e.g. ``@sekai.spaces.flatdim.register(MySpace)``.
"""

from __future__ import annotations

from sekai.spaces.batch import batch_space, concatenate, create_empty_array, iterate
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete, DiscreteAction
from sekai.spaces.flatten import flatdim, flatten, flatten_space
from sekai.spaces.jsonable import register_space_type, space_from_jsonable
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space
from sekai.spaces.tuple import Tuple
from sekai.spaces.unflatten import unflatten
from sekai.spaces.zero import zero_sample

__all__ = [
    "Box",
    "Dict",
    "Discrete",
    "DiscreteAction",
    "MaskedBox",
    "MultiBinary",
    "MultiDiscrete",
    "Sequence",
    "Space",
    "Tuple",
    "batch_space",
    "concatenate",
    "create_empty_array",
    "flatdim",
    "flatten",
    "flatten_space",
    "iterate",
    "register_space_type",
    "space_from_jsonable",
    "unflatten",
    "zero_sample",
]
