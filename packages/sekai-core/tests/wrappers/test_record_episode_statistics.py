"""RecordEpisodeStatistics: EpisodeStats in info, tracker calls, counters."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.stats import EpisodeStats, InMemoryTracker
from sekai.wrappers import AutoReset, RecordEpisodeStatistics, TimeLimit, record_episode_statistics


class RecordingTracker:
    """A StatsTracker that records every call (and is falsy, like an empty container)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __len__(self) -> int:
        return 0

    def on_reset(self, env_id: str | None, seed: int | None) -> None:
        self.calls.append(("reset", (env_id, seed)))

    def on_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        self.calls.append(("step", (reward, terminated, truncated)))

    def on_episode_end(self, stats: EpisodeStats) -> None:
        self.calls.append(("end", stats))

    def summary(self) -> dict[str, Any]:
        return {}


def test_done_step_puts_episode_stats_in_info(toy_env: Any) -> None:
    env = RecordEpisodeStatistics(toy_env(length=3, reward_fn=lambda a, t: t))
    env.reset(seed=0)
    assert "episode" not in env.step(0).info
    env.step(0)
    result = env.step(0)
    stats = result.info["episode"]
    assert isinstance(stats, EpisodeStats)
    assert (stats.episode_return, stats.episode_length) == (6.0, 3)
    assert (stats.terminated, stats.truncated, stats.done) == (True, False, True)
    assert stats.elapsed_time == pytest.approx(stats.end_time - stats.start_time)
    assert stats.elapsed_time >= 0
    assert stats.extra == {}
    assert env.episode_stats is stats


def test_counters_restart_after_done_without_reset(toy_env: Any) -> None:
    env = RecordEpisodeStatistics(AutoReset(toy_env(length=2)))
    env.reset(seed=0)
    lengths = []
    for _ in range(6):
        result = env.step(0)
        if "episode" in result.info:
            lengths.append(result.info["episode"].episode_length)
    assert lengths == [2, 2, 2]
    assert env.tracker.summary()["num_episodes"] == 3


def test_the_clock_restarts_at_each_episode_end_without_reset(
    toy_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside an AutoReset no reset separates the episodes: the next one starts when the last
    # one ended. A fake clock reads 0, 1, 2, ... (one read per reset and per episode end).
    ticks = iter(range(100))
    clock = types.SimpleNamespace(monotonic=lambda: float(next(ticks)))
    monkeypatch.setattr(record_episode_statistics, "time", clock)
    env = RecordEpisodeStatistics(AutoReset(toy_env(length=2)))
    env.reset(seed=0)
    episodes = [r.info["episode"] for r in (env.step(0) for _ in range(6)) if "episode" in r.info]
    times = [(e.start_time, e.end_time, e.elapsed_time) for e in episodes]
    assert times == [(1.0, 2.0, 1.0), (2.0, 3.0, 1.0), (3.0, 4.0, 1.0)]


def test_default_tracker_is_in_memory_with_deque_size(toy_env: Any) -> None:
    env = RecordEpisodeStatistics(toy_env(length=1), deque_size=2)
    assert isinstance(env.tracker, InMemoryTracker)
    assert env.tracker.episodes.maxlen == 2
    for _ in range(3):
        env.reset(seed=0)
        env.step(0)
    assert env.tracker.summary()["num_episodes"] == 2


def test_falsy_custom_tracker_is_kept_and_called(toy_env: Any) -> None:
    tracker = RecordingTracker()
    inner = toy_env(length=2, reward_fn=lambda a, t: 0.5)
    env = RecordEpisodeStatistics(inner, tracker=tracker)
    assert env.tracker is tracker
    env.reset(seed=7)
    env.step(1)
    env.step(1)
    kinds = [kind for kind, _ in tracker.calls]
    assert kinds == ["reset", "step", "step", "end"]
    assert tracker.calls[0][1] == (None, 7)
    assert tracker.calls[2][1] == (0.5, True, False)
    assert tracker.calls[3][1].episode_return == 1.0


def test_the_wrapper_is_generic_in_its_tracker_type(toy_env: Any) -> None:
    # Type checkers see env.tracker as the tracker passed (InMemoryTracker by default), so the
    # documented env.tracker.episodes type-checks; the parameter is subscriptable at runtime.
    tracker = RecordingTracker()
    env = RecordEpisodeStatistics[RecordingTracker](toy_env(), tracker=tracker)
    assert env.tracker is tracker
    assert isinstance(RecordEpisodeStatistics[InMemoryTracker](toy_env()).tracker, InMemoryTracker)


def test_on_reset_gets_spec_id_and_recorded_seed(toy_env: Any) -> None:
    tracker = RecordingTracker()
    base = toy_env()
    base.spec = sekai.EnvSpec(id="demo/Toy-v0")
    env = RecordEpisodeStatistics(base, tracker=tracker)
    env.reset(seed=11)
    assert tracker.calls[0] == ("reset", ("demo/Toy-v0", 11))


def test_on_reset_gets_the_seed_the_env_has_recorded(toy_env: Any) -> None:
    # core.md §5 and §3: an unseeded reset keeps the recorded seed, a Generator records -1
    tracker = RecordingTracker()
    env = RecordEpisodeStatistics(toy_env(), tracker=tracker)
    env.reset(seed=11)
    env.reset()
    env.reset(seed=np.random.default_rng(0))
    seeds = [args[1] for name, args in tracker.calls if name == "reset"]
    assert seeds == [11, 11, -1] == [11, 11, env._rng_seed]


def test_truncated_episode_through_time_limit(toy_env: Any) -> None:
    env = RecordEpisodeStatistics(TimeLimit(toy_env(length=100), 4))
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(0)
    stats = result.info["episode"]
    assert (stats.episode_length, stats.truncated, stats.terminated) == (4, True, False)
    assert result.info["elapsed_steps"] == 4


def test_summary_after_three_episodes(toy_env: Any) -> None:
    returns = iter([18, 16, 11])
    env = RecordEpisodeStatistics(toy_env(length=1, reward_fn=lambda a, t: next(returns)))
    for _ in range(3):
        env.reset(seed=0)
        env.step(0)
    assert env.tracker.summary() == {
        "num_episodes": 3,
        "mean_return": 15.0,
        "min_return": 11.0,
        "max_return": 18.0,
        "mean_length": 1.0,
    }


@pytest.mark.parametrize("owner", ["RecordEpisodeStatistics", "VecRecordEpisodeStatistics"])
def test_a_tracker_without_the_tracker_methods_is_refused_at_construction(
    owner: str, toy_env: Any
) -> None:
    class Partial:
        def on_reset(self, env_id: Any, seed: Any) -> None: ...

    build = {
        "RecordEpisodeStatistics": lambda t: sekai.RecordEpisodeStatistics(toy_env(), tracker=t),
        "VecRecordEpisodeStatistics": lambda t: sekai.VecRecordEpisodeStatistics(
            sekai.SyncVecEnv([toy_env]), tracker=t
        ),
    }[owner]
    prefix = (
        f"^{owner}: tracker must be a StatsTracker \\(with on_reset, on_step, on_episode_end\\), "
    )
    with pytest.raises(
        TypeError, match=prefix + r"got int without on_reset, on_step, on_episode_end\.$"
    ):
        build(3)
    with pytest.raises(TypeError, match=prefix + r"got Partial without on_step, on_episode_end\.$"):
        build(Partial())


@pytest.mark.parametrize("owner", ["RecordEpisodeStatistics", "VecRecordEpisodeStatistics"])
def test_deque_size_accepts_numpy_ints_and_errors_name_it(owner: str, toy_env: Any) -> None:
    build = {
        "RecordEpisodeStatistics": lambda n: sekai.RecordEpisodeStatistics(toy_env(), deque_size=n),
        "VecRecordEpisodeStatistics": lambda n: sekai.VecRecordEpisodeStatistics(
            sekai.SyncVecEnv([toy_env]), deque_size=n
        ),
    }[owner]
    assert build(np.int64(3)).tracker.episodes.maxlen == 3
    assert build(None).tracker.episodes.maxlen is None
    with pytest.raises(ValueError, match=rf"^{owner}: deque_size must be >= 1, got 0\.$"):
        build(0)
    with pytest.raises(TypeError, match=rf"^{owner}: deque_size must be an int, got float\.$"):
        build(2.0)
