"""RecordEpisodeStatistics: an EpisodeStats in info["episode"] at the end of every episode."""

from __future__ import annotations

import time
from typing import Any, Generic

from sekai._args import IntLike
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.stats.episode import EpisodeStats
from sekai.stats.trackers import TrackerT, tracker_or_default

__all__ = ["RecordEpisodeStatistics"]


class RecordEpisodeStatistics(ResultWrapper[Any, Any, Any, Any], Generic[TrackerT]):
    """Record each episode's return, length and duration, and feed them to a tracker.

    On the step that ends an episode, ``info["episode"]`` gets an ``EpisodeStats`` (also kept as
    ``episode_stats``) and ``tracker.on_episode_end(stats)`` is called; the counters then restart,
    so this wrapper works on either side of an ``AutoReset``. Every reset calls
    ``tracker.on_reset(env_id, seed)`` and every step ``tracker.on_step(...)``.

    Args:
        env: the environment to wrap.
        tracker: any ``StatsTracker``; ``None`` means ``InMemoryTracker(max_episodes=deque_size)``.
            ``tracker`` has its type for type checkers (``InMemoryTracker`` by default).
        deque_size: the window of the default tracker.
    """

    def __init__(
        self, env: Env[Any, Any], tracker: TrackerT | None = None, deque_size: IntLike = 100
    ) -> None:
        super().__init__(env)
        self.tracker: TrackerT = tracker_or_default("RecordEpisodeStatistics", tracker, deque_size)
        self.episode_stats: EpisodeStats | None = None
        self._return = 0.0
        self._length = 0
        self._start = time.monotonic()

    def _on_reset(self, seed: SeedLike) -> None:
        self._return = 0.0
        self._length = 0
        self._start = time.monotonic()
        spec = self.spec
        env_id = spec.id if spec is not None else None
        # core.md §5: the env's recorded seed (an unseeded reset keeps it, as §3's table says)
        self.tracker.on_reset(env_id=env_id, seed=self._rng_seed)

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        reward = float(result.reward)
        self._return += reward
        self._length += 1
        terminated, truncated = result.terminated, result.truncated
        self.tracker.on_step(reward, terminated, truncated, result.info)
        if terminated or truncated:
            end = time.monotonic()
            stats = EpisodeStats(
                episode_return=self._return,
                episode_length=self._length,
                elapsed_time=end - self._start,
                start_time=self._start,
                end_time=end,
                terminated=bool(terminated),
                truncated=bool(truncated),
            )
            self.episode_stats = stats
            self.tracker.on_episode_end(stats)
            self._return = 0.0
            self._length = 0
            self._start = end
            # A new dict: an env that reuses one info dict must not see the stats appear in it.
            info = {**result.info, "episode": stats}
            return StepResult(result.observation, result.reward, terminated, truncated, info)
        return result
