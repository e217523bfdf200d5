"""EpisodeStats: the typed record of one finished episode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sekai._equal import WALL_CLOCK

__all__ = ["EpisodeStats"]


@dataclass(slots=True)
class EpisodeStats:
    """Return, length and timing of one episode (``info["episode"]`` on the step that ends it).

    Attributes:
        episode_return: the sum of the episode's rewards.
        episode_length: the number of steps in the episode.
        elapsed_time: ``end_time - start_time`` in seconds.
        start_time: ``time.monotonic()`` when the episode started.
        end_time: ``time.monotonic()`` when the episode ended.
        terminated: whether the last step was terminal.
        truncated: whether the last step was truncated.
        extra: anything else a recorder adds (e.g. ``{"env_index": i}`` for vector envs).
    """

    episode_return: float
    episode_length: int
    # Marked so that check_env's determinism check does not compare them.
    elapsed_time: float = field(metadata=WALL_CLOCK)
    start_time: float = field(metadata=WALL_CLOCK)
    end_time: float = field(metadata=WALL_CLOCK)
    terminated: bool
    truncated: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        """``terminated or truncated``."""
        return bool(self.terminated or self.truncated)
