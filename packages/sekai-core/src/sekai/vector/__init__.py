"""Vector environments: batched sub-envs on several backends, their results and wrappers.

Backends: ``SyncVecEnv`` (one after another), ``AsyncVecEnv`` (asyncio), ``ProcVecEnv``
(worker processes) and ``NativeVecEnv`` subclasses (array operations). They share one contract
(core.md §14), implemented once in ``sekai.vector._contract`` and ``VecEnv``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

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
    "VecRecvResult",
    "VecResetResult",
    "VecRewardWrapper",
    "VecStepResult",
    "VecTransformObservation",
    "VecTransformReward",
    "VecWrapper",
    "shared",
    "stack_infos",
]

# name -> module, imported on first use: plugin discovery imports sekai.vector._builtin, and
# ``import sekai.vector`` must not pull in asyncio or multiprocessing machinery for that.
_LAZY = {
    "AsyncVecEnv": "sekai.vector.async_vec_env",
    "NativeVecEnv": "sekai.vector.native",
    "ProcVecEnv": "sekai.vector.proc.vec_env",
    "Spawnable": "sekai.vector.spawnable",
    "SyncVecEnv": "sekai.vector.sync_vec_env",
    "VecActionWrapper": "sekai.vector.vec_wrapper",
    "VecEnv": "sekai.vector.vec_env",
    "VecNormalizeObservation": "sekai.vector.wrappers",
    "VecNormalizeReward": "sekai.vector.wrappers",
    "VecObservationWrapper": "sekai.vector.vec_wrapper",
    "VecRecordEpisodeStatistics": "sekai.vector.wrappers",
    "VecRecvResult": "sekai.vector.result",
    "VecResetResult": "sekai.vector.result",
    "VecRewardWrapper": "sekai.vector.vec_wrapper",
    "VecStepResult": "sekai.vector.result",
    "VecTransformObservation": "sekai.vector.wrappers",
    "VecTransformReward": "sekai.vector.wrappers",
    "VecWrapper": "sekai.vector.vec_wrapper",
    "shared": "sekai.vector.native",
    "stack_infos": "sekai.vector.infos",
}


# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.vector.async_vec_env import AsyncVecEnv as AsyncVecEnv
    from sekai.vector.infos import stack_infos as stack_infos
    from sekai.vector.native import NativeVecEnv as NativeVecEnv, shared as shared
    from sekai.vector.proc.vec_env import ProcVecEnv as ProcVecEnv
    from sekai.vector.result import (
        VecRecvResult as VecRecvResult,
        VecResetResult as VecResetResult,
        VecStepResult as VecStepResult,
    )
    from sekai.vector.spawnable import Spawnable as Spawnable
    from sekai.vector.sync_vec_env import SyncVecEnv as SyncVecEnv
    from sekai.vector.vec_env import VecEnv as VecEnv
    from sekai.vector.vec_wrapper import (
        VecActionWrapper as VecActionWrapper,
        VecObservationWrapper as VecObservationWrapper,
        VecRewardWrapper as VecRewardWrapper,
        VecWrapper as VecWrapper,
    )
    from sekai.vector.wrappers import (
        VecNormalizeObservation as VecNormalizeObservation,
        VecNormalizeReward as VecNormalizeReward,
        VecRecordEpisodeStatistics as VecRecordEpisodeStatistics,
        VecTransformObservation as VecTransformObservation,
        VecTransformReward as VecTransformReward,
    )
