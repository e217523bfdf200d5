"""EpisodeStats."""

from __future__ import annotations

import dataclasses

import pytest

import sekai
from sekai.stats import EpisodeStats


def _stats(**kwargs: object) -> EpisodeStats:
    fields: dict[str, object] = {
        "episode_return": 5.0,
        "episode_length": 5,
        "elapsed_time": 0.5,
        "start_time": 1.0,
        "end_time": 1.5,
        "terminated": False,
        "truncated": True,
    }
    fields.update(kwargs)
    return EpisodeStats(**fields)  # type: ignore[arg-type]


def test_episode_stats_is_a_mutable_slotted_dataclass() -> None:
    stats = _stats()
    assert dataclasses.is_dataclass(stats) and not hasattr(stats, "__dict__")
    stats.extra["env_index"] = 2
    stats.episode_return = 6.0
    assert stats.episode_return == 6.0
    with pytest.raises(AttributeError):
        stats.other = 1  # type: ignore[attr-defined]
    assert sekai.EpisodeStats is EpisodeStats


def test_episode_stats_repr_lists_fields_in_order() -> None:
    assert repr(_stats()) == (
        "EpisodeStats(episode_return=5.0, episode_length=5, elapsed_time=0.5, start_time=1.0, "
        "end_time=1.5, terminated=False, truncated=True, extra={})"
    )


@pytest.mark.parametrize(
    "terminated, truncated, done", [(False, False, False), (True, False, True), (False, True, True)]
)
def test_episode_stats_done(terminated: bool, truncated: bool, done: bool) -> None:
    assert _stats(terminated=terminated, truncated=truncated).done is done


def test_extra_defaults_are_not_shared() -> None:
    a, b = _stats(), _stats()
    a.extra["x"] = 1
    assert b.extra == {}
