"""Episode statistics, trackers and running mean/variance estimators."""

from __future__ import annotations

from sekai.stats.episode import EpisodeStats
from sekai.stats.running import ExponentialMovingStats, RunningMeanStd
from sekai.stats.trackers import (
    IndexedStatsTracker,
    InMemoryTracker,
    LoggingTracker,
    StatsTracker,
)

__all__ = [
    "EpisodeStats",
    "ExponentialMovingStats",
    "InMemoryTracker",
    "IndexedStatsTracker",
    "LoggingTracker",
    "RunningMeanStd",
    "StatsTracker",
]
