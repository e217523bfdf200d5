"""The environment registry: register, look up and build environments by ID."""

from __future__ import annotations

from sekai.registry.api import (
    all_specs,
    deregister,
    make,
    make_vec,
    pprint_registry,
    register,
    register_namespace,
    spec,
)
from sekai.registry.registry import EnvRegistry
from sekai.registry.spec import EnvSpec, SpecSource, WrapperSpec

__all__ = [
    "EnvRegistry",
    "EnvSpec",
    "SpecSource",
    "WrapperSpec",
    "all_specs",
    "deregister",
    "make",
    "make_vec",
    "pprint_registry",
    "register",
    "register_namespace",
    "spec",
]
