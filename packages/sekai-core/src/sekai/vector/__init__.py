"""Vector environments: batched sub-envs on several backends, their results and wrappers.

Backends: ``SyncVecEnv`` (one after another), ``AsyncVecEnv`` (asyncio), ``ProcVecEnv``
(worker processes) and ``NativeVecEnv`` subclasses (array operations). They share one contract
(core.md §14), implemented once in ``sekai.vector._contract`` and ``VecEnv``.
"""

from __future__ import annotations

import importlib
from typing import Any

from sekai.vector.async_vec_env import AsyncVecEnv
from sekai.vector.infos import stack_infos
from sekai.vector.native import NativeVecEnv, shared
from sekai.vector.result import VecResetResult, VecStepResult
from sekai.vector.spawnable import Spawnable
from sekai.vector.sync_vec_env import SyncVecEnv
from sekai.vector.vec_env import VecEnv
from sekai.vector.vec_wrapper import (
    VecActionWrapper,
    VecObservationWrapper,
    VecRewardWrapper,
    VecWrapper,
)
from sekai.vector.wrappers import (
    VecNormalizeObservation,
    VecNormalizeReward,
    VecRecordEpisodeStatistics,
    VecTransformObservation,
    VecTransformReward,
)

__all__ = [
    "AsyncVecEnv",
    "NativeVecEnv",
    "ProcVecEnv",
    "Spawnable",
    "SyncVecEnv",
    "VecActionWrapper",
    "VecEnv",
    "VecNormalizeObservation",
    "VecNormalizeReward",
    "VecObservationWrapper",
    "VecRecordEpisodeStatistics",
    "VecResetResult",
    "VecRewardWrapper",
    "VecStepResult",
    "VecTransformObservation",
    "VecTransformReward",
    "VecWrapper",
    "shared",
    "stack_infos",
]

# Imported on first use: it pulls in multiprocessing machinery that most users never need.
# (The module-level __getattr__ also lets type checkers accept ``from sekai.vector import
# ProcVecEnv``; the proc package may add a TYPE_CHECKING import here for a precise type.)
_LAZY = {"ProcVecEnv": "sekai.vector.proc.vec_env"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sekai.vector' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.startswith(exc.name):  # the backend is absent
            raise AttributeError(f"module 'sekai.vector' has no attribute {name!r}") from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
