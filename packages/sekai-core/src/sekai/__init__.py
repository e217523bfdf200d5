"""sekai: typed reinforcement-learning environments, built first for financial markets.

``import sekai`` is cheap: the public names below are imported on first use, and plugins are
discovered only at the first registry operation (``make``, ``make_vec``, ``all_specs``, ...).
"""

from __future__ import annotations

from pkgutil import extend_path

# Every installed sekai distribution contributes a ``sekai/`` directory; join them (the
# pkgutil-style namespace), so sekai.finance, sekai.cli, ... resolve from their own wheels.
__path__ = extend_path(__path__, __name__)

from typing import TYPE_CHECKING

from sekai import _discovery
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
    SharedMemoryWarning,
    SpaceMismatch,
    VecEnvClosed,
    VecEnvWorkerError,
    WipeOutWarning,
)
from sekai.utils._lazy import lazy_exports

install_missing_distribution_finder()


def _plugin_host(registry: EnvRegistry) -> PluginHost:
    # The API layer wires discovery (sekai.plugins) into the registry below it; the plugin
    # machinery is imported at the first registry operation, never by ``import sekai``.
    from sekai.plugins._host import default_host

    return default_host(registry)


_discovery.install_host_factory(_plugin_host)

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
    "SeedLike": "sekai.core._rng",
    # spaces
    "Space": "sekai.spaces",
    "Box": "sekai.spaces",
    "Discrete": "sekai.spaces",
    "DiscreteAction": "sekai.spaces",
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
    "IndexedStatsTracker": "sekai.stats",
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
    "VecRecvResult": "sekai.vector",
    "SyncVecEnv": "sekai.vector",
    "AsyncVecEnv": "sekai.vector",
    "ProcVecEnv": "sekai.vector",
    "NativeVecEnv": "sekai.vector",
    "Spawnable": "sekai.vector",
    "shared": "sekai.vector",
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

# Submodules reachable as attributes after a plain ``import sekai``; one whose distribution is not
# installed raises AttributeError naming it (sekai._providers' finder).
_SUBMODULES: dict[str, str] = {
    "spaces": "sekai.spaces",
    "space_utils": "sekai.space_utils",
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
    "ray": "sekai.ray",
    "jax": "sekai.jax",
    "torch": "sekai.torch",
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
    "SharedMemoryWarning",
    "SpaceMismatch",
    "StepResult",
    "VecEnvClosed",
    "VecEnvWorkerError",
    "WipeOutWarning",
    "__version__",
    *_LAZY,
]


# A submodule that is not installed (sekai-finance absent) is an AttributeError: hasattr stays safe.
# Hidden from type checkers, which would otherwise type every unknown name (a typo) as Any; they
# see the names imported below instead.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY, submodules=_SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai import (
        cli as cli,
        compat as compat,
        envs as envs,
        error as error,
        finance as finance,
        jax as jax,
        plugins as plugins,
        ray as ray,
        registry as registry,
        rendering as rendering,
        space_utils as space_utils,
        spaces as spaces,
        stats as stats,
        testing as testing,
        torch as torch,
        utils as utils,
        vector as vector,
        wrappers as wrappers,
    )
    from sekai.core._rng import (
        SeedLike as SeedLike,
        make_seed_sequence as make_seed_sequence,
        np_random as np_random,
    )
    from sekai.core.multi_agent import MultiAgentEnv as MultiAgentEnv
    from sekai.core.wrapper import (
        ActionWrapper as ActionWrapper,
        ObservationWrapper as ObservationWrapper,
        RewardWrapper as RewardWrapper,
        Wrapper as Wrapper,
    )
    from sekai.plugins._host import PluginHost
    from sekai.registry import (
        EnvSpec as EnvSpec,
        WrapperSpec as WrapperSpec,
        all_specs as all_specs,
        deregister as deregister,
        make as make,
        make_vec as make_vec,
        pprint_registry as pprint_registry,
        register as register,
        register_namespace as register_namespace,
    )
    from sekai.registry.api import spec as spec
    from sekai.registry.registry import EnvRegistry
    from sekai.spaces import (
        Box as Box,
        Dict as Dict,
        Discrete as Discrete,
        DiscreteAction as DiscreteAction,
        MaskedBox as MaskedBox,
        MultiBinary as MultiBinary,
        MultiDiscrete as MultiDiscrete,
        Sequence as Sequence,
        Space as Space,
        Tuple as Tuple,
    )
    from sekai.stats import (
        EpisodeStats as EpisodeStats,
        ExponentialMovingStats as ExponentialMovingStats,
        IndexedStatsTracker as IndexedStatsTracker,
        InMemoryTracker as InMemoryTracker,
        LoggingTracker as LoggingTracker,
        RunningMeanStd as RunningMeanStd,
        StatsTracker as StatsTracker,
    )
    from sekai.utils.action_mask import get_action_mask as get_action_mask
    from sekai.utils.checker import check_env as check_env
    from sekai.vector import (
        AsyncVecEnv as AsyncVecEnv,
        NativeVecEnv as NativeVecEnv,
        ProcVecEnv as ProcVecEnv,
        Spawnable as Spawnable,
        SyncVecEnv as SyncVecEnv,
        VecActionWrapper as VecActionWrapper,
        VecEnv as VecEnv,
        VecNormalizeObservation as VecNormalizeObservation,
        VecNormalizeReward as VecNormalizeReward,
        VecObservationWrapper as VecObservationWrapper,
        VecRecordEpisodeStatistics as VecRecordEpisodeStatistics,
        VecRecvResult as VecRecvResult,
        VecResetResult as VecResetResult,
        VecRewardWrapper as VecRewardWrapper,
        VecStepResult as VecStepResult,
        VecTransformObservation as VecTransformObservation,
        VecTransformReward as VecTransformReward,
        VecWrapper as VecWrapper,
        shared as shared,
        stack_infos as stack_infos,
    )
    from sekai.wrappers import (
        ActionMaskObservation as ActionMaskObservation,
        ActionRepeat as ActionRepeat,
        AutoReset as AutoReset,
        ClipAction as ClipAction,
        ClipReward as ClipReward,
        DelayAction as DelayAction,
        DelayObservation as DelayObservation,
        DtypeObservation as DtypeObservation,
        FilterObservation as FilterObservation,
        FlattenObservation as FlattenObservation,
        FrameStackObservation as FrameStackObservation,
        NormalizeObservation as NormalizeObservation,
        NormalizeReward as NormalizeReward,
        OrderEnforcing as OrderEnforcing,
        PadSequenceObservation as PadSequenceObservation,
        RecordEpisodeStatistics as RecordEpisodeStatistics,
        RescaleAction as RescaleAction,
        RescaleObservation as RescaleObservation,
        StickyAction as StickyAction,
        TimeAwareObservation as TimeAwareObservation,
        TimeLimit as TimeLimit,
        TransformObservation as TransformObservation,
        TransformReward as TransformReward,
    )
