"""The space utilities in one namespace, like gymnasium's ``spaces.utils``."""

from __future__ import annotations

from sekai.spaces.batch import batch_space, concatenate, create_empty_array, iterate
from sekai.spaces.flatten import flatdim, flatten, flatten_space
from sekai.spaces.jsonable import register_space_type, space_from_jsonable
from sekai.spaces.unflatten import unflatten
from sekai.spaces.zero import zero_sample

__all__ = [
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
