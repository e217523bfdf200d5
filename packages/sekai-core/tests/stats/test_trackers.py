"""StatsTracker, InMemoryTracker and LoggingTracker."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import EpisodeStats, InMemoryTracker, LoggingTracker, StatsTracker


def _episode(ret: float, length: int) -> EpisodeStats:
    return EpisodeStats(ret, length, 0.1, 1.0, 1.1, True, False)


def test_in_memory_tracker_summary_matches_quickstart() -> None:
    tracker = InMemoryTracker()
    assert tracker.summary() == {}
    assert tracker.mean_return() == 0.0 and tracker.mean_length() == 0.0
    for ret in (18, 16, 11):
        tracker.on_episode_end(_episode(float(ret), ret))
    assert tracker.summary() == {
        "num_episodes": 3,
        "mean_return": 15.0,
        "min_return": 11.0,
        "max_return": 18.0,
        "mean_length": 15.0,
    }
    assert tracker.mean_return() == 15.0


def test_in_memory_tracker_window_and_unbounded() -> None:
    tracker = InMemoryTracker(max_episodes=2)
    for ret in (1.0, 2.0, 3.0):
        tracker.on_episode_end(_episode(ret, 1))
    assert [e.episode_return for e in tracker.episodes] == [2.0, 3.0]
    assert tracker.summary()["num_episodes"] == 2
    unbounded = InMemoryTracker(max_episodes=None)
    assert unbounded.episodes.maxlen is None
    assert repr(tracker) == "InMemoryTracker(max_episodes=2, episodes=2)"


def test_in_memory_tracker_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match=r"^InMemoryTracker: max_episodes must be >= 1, got 0\.$"):
        InMemoryTracker(max_episodes=0)


def test_in_memory_tracker_accepts_numpy_ints_and_refuses_other_types() -> None:
    assert InMemoryTracker(max_episodes=np.int64(2)).episodes.maxlen == 2
    with pytest.raises(
        TypeError, match=r"^InMemoryTracker: max_episodes must be an int, got bool\.$"
    ):
        InMemoryTracker(max_episodes=True)


def test_logging_tracker_logs_episode_end(caplog: pytest.LogCaptureFixture) -> None:
    tracker = LoggingTracker()
    assert tracker.summary() == {}
    with caplog.at_level(logging.INFO, logger="sekai.stats"):
        tracker.on_reset("x", 0)
        tracker.on_step(1.0, False, False, {})
        tracker.on_episode_end(_episode(4.0, 2))
    (record,) = caplog.records
    assert record.name == "sekai.stats" and record.getMessage() == "episode_end"
    assert (record.episode_return, record.episode_length, record.terminated) == (4.0, 2, True)  # type: ignore[attr-defined]
    assert tracker.summary() == {"num_episodes": 1, "num_steps": 1}
    assert repr(tracker) == "LoggingTracker(logger='sekai.stats', episodes=1)"


def test_logging_tracker_uses_given_logger(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("my.app")
    with caplog.at_level(logging.INFO, logger="my.app"):
        LoggingTracker(logger).on_episode_end(_episode(1.0, 1))
    assert caplog.records[0].name == "my.app"


def test_logging_tracker_keeps_the_episode_fields_through_a_logger_adapter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inner = logging.LoggerAdapter(logging.getLogger("my.app"), {"run": "exp-1"})
    adapter = logging.LoggerAdapter(inner, {"host": "h1"})
    with caplog.at_level(logging.INFO, logger="my.app"):
        LoggingTracker(adapter).on_episode_end(_episode(10.0, 3))
    (record,) = caplog.records
    assert record.episode_return == 10.0 and record.episode_length == 3  # type: ignore[attr-defined]
    assert record.run == "exp-1" and record.host == "h1"  # type: ignore[attr-defined]


class Tagging(logging.LoggerAdapter):  # type: ignore[type-arg]
    """An adapter with an info() of its own."""

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        super().info(f"[tagged] {msg}", *args, **kwargs)


def test_logging_tracker_calls_an_adapters_own_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="my.app"):
        LoggingTracker(Tagging(logging.getLogger("my.app"), {})).on_episode_end(_episode(1.0, 1))
    assert caplog.records[0].getMessage() == "[tagged] episode_end"


def test_logging_tracker_refuses_what_is_not_a_logger() -> None:
    with pytest.raises(
        TypeError, match=r"got str; for a logger by name, pass logging\.getLogger\('my\.app'\)\.$"
    ):
        LoggingTracker("my.app")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"must be a logging\.Logger .* or None, got int\.$"):
        LoggingTracker(3)  # type: ignore[arg-type]


def test_any_object_with_the_methods_is_a_stats_tracker() -> None:
    class Duck:
        def on_reset(self, env_id: Any, seed: Any) -> None: ...
        def on_step(self, reward: Any, terminated: Any, truncated: Any, info: Any) -> None: ...
        def on_episode_end(self, stats: Any) -> None: ...
        def summary(self) -> dict[str, Any]:
            return {}

    assert isinstance(Duck(), StatsTracker)
    assert isinstance(InMemoryTracker(), sekai.StatsTracker)
    assert isinstance(LoggingTracker(), StatsTracker)
    assert not isinstance(object(), StatsTracker)


def _summary_of(returns: list[float]) -> dict[str, Any]:
    tracker = InMemoryTracker()
    for value in returns:
        tracker.on_episode_end(EpisodeStats(value, 1, 0.0, 0.0, 0.0, True, False))
    return tracker.summary()


@pytest.mark.parametrize(
    "order", [[math.nan, 1.0, 0.5], [1.0, math.nan, 0.5], [1.0, 0.5, math.nan]]
)
def test_a_nan_return_makes_every_return_statistic_nan_whatever_its_position(
    order: list[float],
) -> None:
    summary = _summary_of(order)
    assert all(math.isnan(summary[key]) for key in ("mean_return", "min_return", "max_return"))


def test_means_are_correctly_rounded() -> None:
    assert _summary_of([0.1] * 10)["mean_return"] == 0.1
    assert _summary_of([1e16, 1.0, -1e16])["mean_return"] == 1 / 3
    assert math.isnan(_summary_of([math.inf, -math.inf])["mean_return"])
    assert _summary_of([1e308, 1e308])["mean_return"] == math.inf


def test_logging_tracker_summary_counts_steps_before_any_episode_ends() -> None:
    tracker = LoggingTracker()
    tracker.on_step(1.0, False, False, {})
    tracker.on_step(1.0, False, False, {})
    assert tracker.summary() == {"num_episodes": 0, "num_steps": 2}


def test_logging_tracker_logs_every_field_of_the_episode(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sekai.stats"):
        LoggingTracker().on_episode_end(EpisodeStats(2.5, 4, 0.25, 1.0, 1.25, False, True))
    (record,) = caplog.records
    logged = {
        name: getattr(record, name)
        for name in ("episode_return", "episode_length", "elapsed_time", "terminated", "truncated")
    }
    assert logged == {
        "episode_return": 2.5,
        "episode_length": 4,
        "elapsed_time": 0.25,
        "terminated": False,
        "truncated": True,
    }


def test_logging_tracker_refuses_a_logger_whose_info_is_not_callable() -> None:
    class Record:
        info = "not a method"

    with pytest.raises(TypeError, match=r"must be a logging\.Logger .* or None, got Record\.$"):
        LoggingTracker(Record())  # type: ignore[arg-type]
