"""The space utilities under gymnasium's name: ``import sekai.space_utils`` (or ``from sekai
import space_utils``) gives the functions of ``sekai.spaces.utils``, the same objects."""

from __future__ import annotations

from sekai.spaces.utils import (
    batch_space,
    concatenate,
    create_empty_array,
    flatdim,
    flatten,
    flatten_space,
    iterate,
    register_space_type,
    space_from_jsonable,
    unflatten,
    zero_sample,
)

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
