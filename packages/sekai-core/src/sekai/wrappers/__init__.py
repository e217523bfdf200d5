"""Built-in wrappers (every one implements both the sync and the async paths)."""

from __future__ import annotations

from sekai.wrappers.action_mask_observation import ActionMaskObservation
from sekai.wrappers.action_repeat import ActionRepeat
from sekai.wrappers.autoreset import AutoReset
from sekai.wrappers.delay_action import DelayAction
from sekai.wrappers.delay_observation import DelayObservation
from sekai.wrappers.flatten_observation import FlattenObservation
from sekai.wrappers.frame_stack import FrameStackObservation
from sekai.wrappers.normalize_observation import NormalizeObservation
from sekai.wrappers.normalize_reward import NormalizeReward
from sekai.wrappers.order_enforcing import OrderEnforcing
from sekai.wrappers.pad_sequence import PadSequenceObservation
from sekai.wrappers.record_episode_statistics import RecordEpisodeStatistics
from sekai.wrappers.sticky_action import StickyAction
from sekai.wrappers.time_aware import TimeAwareObservation
from sekai.wrappers.time_limit import TimeLimit
from sekai.wrappers.transform_action import ClipAction, RescaleAction
from sekai.wrappers.transform_observation import (
    DtypeObservation,
    FilterObservation,
    RescaleObservation,
    TransformObservation,
)
from sekai.wrappers.transform_reward import ClipReward, TransformReward

__all__ = [
    "ActionMaskObservation",
    "ActionRepeat",
    "AutoReset",
    "ClipAction",
    "ClipReward",
    "DelayAction",
    "DelayObservation",
    "DtypeObservation",
    "FilterObservation",
    "FlattenObservation",
    "FrameStackObservation",
    "NormalizeObservation",
    "NormalizeReward",
    "OrderEnforcing",
    "PadSequenceObservation",
    "RecordEpisodeStatistics",
    "RescaleAction",
    "RescaleObservation",
    "StickyAction",
    "TimeAwareObservation",
    "TimeLimit",
    "TransformObservation",
    "TransformReward",
]
