"""sekai: typed reinforcement-learning environments, built first for financial markets.

``import sekai`` is cheap: the public names below are imported on first use, and plugins are
discovered only at the first registry operation (``make``, ``make_vec``, ``all_specs``, ...).
"""

from __future__ import annotations

from pkgutil import extend_path

# Every installed sekai distribution contributes a ``sekai/`` directory; join them (the
# pkgutil-style namespace), so sekai.finance, sekai.cli, ... resolve from their own wheels.
__path__ = extend_path(__path__, __name__)

import importlib
from typing import TYPE_CHECKING, Any

from sekai._providers import install_missing_distribution_finder
from sekai._version import __version__
from sekai.core.env import Env
from sekai.core.result import MAResetResult, MAStepResult, ResetResult, StepResult
from sekai.error import (
    AsyncCallPending,
    EnvAlreadyRegistered,
    EnvNotFound,
    InvalidAction,
    InvalidObservation,
    LookAheadError,
    MissingDependency,
    PluginLoadWarning,
    ResetRequired,
    SekaiError,
    SpaceMismatch,
    VecEnvClosed,
    VecEnvWorkerError,
)

install_missing_distribution_finder()

# name -> module that defines it; imported on first attribute access (PEP 562).
_LAZY: dict[str, str] = {
    # core
    "Wrapper": "sekai.core.wrapper",
    "ObservationWrapper": "sekai.core.wrapper",
    "ActionWrapper": "sekai.core.wrapper",
    "RewardWrapper": "sekai.core.wrapper",
    "MultiAgentEnv": "sekai.core.multi_agent",
    "np_random": "sekai.core._rng",
    "make_seed_sequence": "sekai.core._rng",
    # spaces
    "Space": "sekai.spaces",
    "Box": "sekai.spaces",
    "Discrete": "sekai.spaces",
    "MultiDiscrete": "sekai.spaces",
    "MultiBinary": "sekai.spaces",
    "Dict": "sekai.spaces",
    "Tuple": "sekai.spaces",
    "Sequence": "sekai.spaces",
    "MaskedBox": "sekai.spaces",
    # wrappers
    "TimeLimit": "sekai.wrappers",
    "OrderEnforcing": "sekai.wrappers",
    "AutoReset": "sekai.wrappers",
    "RecordEpisodeStatistics": "sekai.wrappers",
    "ClipAction": "sekai.wrappers",
    "RescaleAction": "sekai.wrappers",
    "StickyAction": "sekai.wrappers",
    "ActionRepeat": "sekai.wrappers",
    "DelayAction": "sekai.wrappers",
    "FlattenObservation": "sekai.wrappers",
    "NormalizeObservation": "sekai.wrappers",
    "FrameStackObservation": "sekai.wrappers",
    "TransformObservation": "sekai.wrappers",
    "RescaleObservation": "sekai.wrappers",
    "DtypeObservation": "sekai.wrappers",
    "FilterObservation": "sekai.wrappers",
    "TimeAwareObservation": "sekai.wrappers",
    "DelayObservation": "sekai.wrappers",
    "ActionMaskObservation": "sekai.wrappers",
    "PadSequenceObservation": "sekai.wrappers",
    "NormalizeReward": "sekai.wrappers",
    "TransformReward": "sekai.wrappers",
    "ClipReward": "sekai.wrappers",
    # statistics
    "EpisodeStats": "sekai.stats",
    "StatsTracker": "sekai.stats",
    "InMemoryTracker": "sekai.stats",
    "LoggingTracker": "sekai.stats",
    "RunningMeanStd": "sekai.stats",
    "ExponentialMovingStats": "sekai.stats",
    # registry
    "register": "sekai.registry",
    "deregister": "sekai.registry",
    "spec": "sekai.registry",
    "make": "sekai.registry",
    "make_vec": "sekai.registry",
    "all_specs": "sekai.registry",
    "pprint_registry": "sekai.registry",
    "register_namespace": "sekai.registry",
    "EnvSpec": "sekai.registry",
    "WrapperSpec": "sekai.registry",
    # checker and helpers
    "check_env": "sekai.utils.checker",
    "get_action_mask": "sekai.utils.action_mask",
    # vector
    "VecEnv": "sekai.vector",
    "VecResetResult": "sekai.vector",
    "VecStepResult": "sekai.vector",
    "SyncVecEnv": "sekai.vector",
    "AsyncVecEnv": "sekai.vector",
    "ProcVecEnv": "sekai.vector",
    "NativeVecEnv": "sekai.vector",
    "VecWrapper": "sekai.vector",
    "VecObservationWrapper": "sekai.vector",
    "VecRewardWrapper": "sekai.vector",
    "VecActionWrapper": "sekai.vector",
    "VecRecordEpisodeStatistics": "sekai.vector",
    "VecNormalizeObservation": "sekai.vector",
    "VecNormalizeReward": "sekai.vector",
    "VecTransformObservation": "sekai.vector",
    "VecTransformReward": "sekai.vector",
    "stack_infos": "sekai.vector",
}

# Submodules reachable as attributes after a plain ``import sekai`` (space_utils is an alias).
_SUBMODULES: dict[str, str] = {
    "spaces": "sekai.spaces",
    "space_utils": "sekai.spaces",
    "wrappers": "sekai.wrappers",
    "vector": "sekai.vector",
    "registry": "sekai.registry",
    "plugins": "sekai.plugins",
    "rendering": "sekai.rendering",
    "stats": "sekai.stats",
    "utils": "sekai.utils",
    "envs": "sekai.envs",
    "testing": "sekai.testing",
    "error": "sekai.error",
    "finance": "sekai.finance",
    "compat": "sekai.compat",
    "cli": "sekai.cli",
}

__all__ = [
    "AsyncCallPending",
    "Env",
    "EnvAlreadyRegistered",
    "EnvNotFound",
    "InvalidAction",
    "InvalidObservation",
    "LookAheadError",
    "MAResetResult",
    "MAStepResult",
    "MissingDependency",
    "PluginLoadWarning",
    "ResetRequired",
    "ResetResult",
    "SekaiError",
    "SpaceMismatch",
    "StepResult",
    "VecEnvClosed",
    "VecEnvWorkerError",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is not None:
        value = getattr(importlib.import_module(module_name), name)
        globals()[name] = value
        return value
    submodule = _SUBMODULES.get(name)
    if submodule is not None:
        try:
            return importlib.import_module(submodule)
        except ModuleNotFoundError as exc:
            # hasattr(sekai, "finance") must stay safe when sekai-finance is absent.
            raise AttributeError(str(exc)) from exc
    raise AttributeError(f"module 'sekai' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES})


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.core._rng import make_seed_sequence, np_random
    from sekai.core.multi_agent import MultiAgentEnv
    from sekai.core.wrapper import ActionWrapper, ObservationWrapper, RewardWrapper, Wrapper
    from sekai.registry import (
        EnvSpec,
        WrapperSpec,
        all_specs,
        deregister,
        make,
        make_vec,
        pprint_registry,
        register,
        register_namespace,
        spec,
    )
    from sekai.spaces import (
        Box,
        Dict,
        Discrete,
        MaskedBox,
        MultiBinary,
        MultiDiscrete,
        Sequence,
        Space,
        Tuple,
    )
    from sekai.stats import (
        EpisodeStats,
        ExponentialMovingStats,
        InMemoryTracker,
        LoggingTracker,
        RunningMeanStd,
        StatsTracker,
    )
    from sekai.utils.action_mask import get_action_mask
    from sekai.utils.checker import check_env
    from sekai.vector import (
        AsyncVecEnv,
        NativeVecEnv,
        ProcVecEnv,
        SyncVecEnv,
        VecActionWrapper,
        VecEnv,
        VecNormalizeObservation,
        VecNormalizeReward,
        VecObservationWrapper,
        VecRecordEpisodeStatistics,
        VecResetResult,
        VecRewardWrapper,
        VecStepResult,
        VecTransformObservation,
        VecTransformReward,
        VecWrapper,
        stack_infos,
    )
    from sekai.wrappers import (
        ActionMaskObservation,
        ActionRepeat,
        AutoReset,
        ClipAction,
        ClipReward,
        DelayAction,
        DelayObservation,
        DtypeObservation,
        FilterObservation,
        FlattenObservation,
        FrameStackObservation,
        NormalizeObservation,
        NormalizeReward,
        OrderEnforcing,
        PadSequenceObservation,
        RecordEpisodeStatistics,
        RescaleAction,
        RescaleObservation,
        StickyAction,
        TimeAwareObservation,
        TimeLimit,
        TransformObservation,
        TransformReward,
    )
