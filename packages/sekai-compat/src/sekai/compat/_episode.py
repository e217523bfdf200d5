"""Sekai's EpisodeStats as the ``{"r", "l", "t"}`` dict gymnasium's and SB3's code reads."""

from __future__ import annotations

from typing import Any

from sekai.stats import EpisodeStats

__all__ = ["episode_dict", "with_episode_dict"]


def episode_dict(stats: EpisodeStats) -> dict[str, float]:
    """``stats`` as gymnasium's RecordEpisodeStatistics and SB3's Monitor report an episode."""
    return {
        "r": float(stats.episode_return),
        "l": int(stats.episode_length),
        "t": float(stats.elapsed_time),
    }


def with_episode_dict(info: dict[Any, Any]) -> dict[Any, Any]:
    """``info`` with its ``"episode"`` EpisodeStats as ``episode_dict`` (a new dict), or
    ``info`` itself when it holds none."""
    episode = info.get("episode")
    if not isinstance(episode, EpisodeStats):
        return info
    return {**info, "episode": episode_dict(episode)}
