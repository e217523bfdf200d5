"""Statistics trackers: the StatsTracker protocols, InMemoryTracker and LoggingTracker."""

from __future__ import annotations

import inspect
import logging
import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from sekai._args import IntLike, check_int
from sekai.stats.episode import EpisodeStats

__all__ = ["InMemoryTracker", "IndexedStatsTracker", "LoggingTracker", "StatsTracker"]


@runtime_checkable
class StatsTracker(Protocol):
    """Receives episode events from ``RecordEpisodeStatistics`` (any object with these methods)."""

    def on_reset(self, env_id: str | None, seed: int | None) -> None:
        """Called after every reset with the env's ID and a seed. ``RecordEpisodeStatistics``
        passes the env's recorded seed (kept by an unseeded reset, -1 for a Generator).
        ``VecRecordEpisodeStatistics`` calls it once per sub-env, and again for each autoreset,
        with the seed that reset used (None when it was not reseeded); a native env's sub-envs
        report the int that seeded their shared generator, or None. A tracker that declares an
        ``env_index`` keyword here or in ``on_step`` gets the sub-env's index from the vector
        wrapper (whose sub-envs' events interleave): see ``IndexedStatsTracker``."""

    def on_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        """Called after every step."""

    def on_episode_end(self, stats: EpisodeStats) -> None:
        """Called once per finished episode."""

    def summary(self) -> dict[str, Any]:
        """Return aggregate statistics (``{}`` when there is nothing to report)."""
        ...


@runtime_checkable
class IndexedStatsTracker(Protocol):
    """A tracker told which sub-env each event is about: ``on_reset`` and ``on_step`` take a
    keyword-only ``env_index``. ``VecRecordEpisodeStatistics`` accepts it as well as a
    ``StatsTracker`` (whose sub-envs' events interleave unlabelled); ``RecordEpisodeStatistics``
    has one env and passes no index, so it takes a ``StatsTracker``. A hook whose ``env_index``
    has a default (``env_index: int = 0``) makes a tracker of both kinds."""

    def on_reset(self, env_id: str | None, seed: int | None, *, env_index: int) -> None:
        """Called after sub-env ``env_index`` reset, as ``StatsTracker.on_reset``."""

    def on_step(
        self,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        *,
        env_index: int,
    ) -> None:
        """Called after every step of sub-env ``env_index``."""

    def on_episode_end(self, stats: EpisodeStats) -> None:
        """Called once per finished episode (``stats.extra["env_index"]`` names the sub-env)."""

    def summary(self) -> dict[str, Any]:
        """Return aggregate statistics (``{}`` when there is nothing to report)."""
        ...


def takes_env_index(hook: Callable[..., Any]) -> bool:
    """Whether a tracker hook names an ``env_index`` parameter, through which
    ``VecRecordEpisodeStatistics`` tells it which sub-env a call is about (a bare
    ``**kwargs`` does not count: such a hook may pass its keywords on to another tracker)."""
    try:
        parameter = inspect.signature(hook).parameters.get("env_index")
    except (TypeError, ValueError):  # no signature to read (some builtins)
        return False
    return parameter is not None and parameter.kind in (
        parameter.KEYWORD_ONLY,
        parameter.POSITIONAL_OR_KEYWORD,
    )


# The type of a recording wrapper's tracker: what was passed, else the default InMemoryTracker
# (so ``env.tracker.episodes`` type-checks); the vector wrapper's may also be indexed.
# typing.TypeVar takes a default only from Python 3.13; the default matters to type checkers
# alone, so the runtime one goes without.
if TYPE_CHECKING:
    from typing_extensions import TypeVar

    TrackerT = TypeVar("TrackerT", bound=StatsTracker, default="InMemoryTracker")
    VecTrackerT = TypeVar(
        "VecTrackerT", bound=StatsTracker | IndexedStatsTracker, default="InMemoryTracker"
    )
else:
    from typing import TypeVar

    TrackerT = TypeVar("TrackerT", bound=StatsTracker)
    VecTrackerT = TypeVar("VecTrackerT", bound=StatsTracker | IndexedStatsTracker)

# The methods the recording wrappers call.
_TRACKER_METHODS = ("on_reset", "on_step", "on_episode_end")


def _window(owner: str, name: str, value: Any) -> int | None:
    """An episode window: None (unbounded) or an int >= 1, NumPy ints included."""
    return None if value is None else check_int(owner, name, value, 1)


def tracker_or_default(
    owner: str, tracker: VecTrackerT | None, deque_size: IntLike | None
) -> VecTrackerT:
    """``tracker``, checked to have the ``StatsTracker`` methods a recording wrapper calls, or
    a new ``InMemoryTracker(deque_size)`` when it is None (errors name ``deque_size``, the
    wrappers' argument)."""
    if tracker is None:
        # The type is InMemoryTracker here: the default, the one a call without tracker infers.
        default = InMemoryTracker(max_episodes=_window(owner, "deque_size", deque_size))
        return cast("VecTrackerT", default)
    missing = [name for name in _TRACKER_METHODS if not callable(getattr(tracker, name, None))]
    if missing:
        raise TypeError(
            f"{owner}: tracker must be a StatsTracker (with {', '.join(_TRACKER_METHODS)}), "
            f"got {type(tracker).__name__} without {', '.join(missing)}."
        )
    return tracker


class InMemoryTracker:
    """Keeps the last ``max_episodes`` EpisodeStats in memory (``None``: unbounded)."""

    def __init__(self, max_episodes: IntLike | None = 100) -> None:
        self.max_episodes = _window("InMemoryTracker", "max_episodes", max_episodes)
        self.episodes: deque[EpisodeStats] = deque(maxlen=self.max_episodes)

    def on_reset(self, env_id: str | None, seed: int | None) -> None:
        """Nothing to do: episodes are recorded when they end."""

    def on_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        """Nothing to do: episodes are recorded when they end."""

    def on_episode_end(self, stats: EpisodeStats) -> None:
        """Append ``stats`` to the window."""
        self.episodes.append(stats)

    def mean_return(self) -> float:
        """Mean episode return over the window (0.0 when empty)."""
        if not self.episodes:
            return 0.0
        return _mean([float(e.episode_return) for e in self.episodes])

    def mean_length(self) -> float:
        """Mean episode length over the window (0.0 when empty)."""
        if not self.episodes:
            return 0.0
        return _mean([float(e.episode_length) for e in self.episodes])

    def summary(self) -> dict[str, Any]:
        """``num_episodes``, ``mean_return``, ``min_return``, ``max_return``, ``mean_length``.

        Returns ``{}`` when no episode has ended.
        """
        if not self.episodes:
            return {}
        returns = [float(e.episode_return) for e in self.episodes]
        return {
            "num_episodes": len(returns),
            "mean_return": _mean(returns),
            "min_return": _extreme(min, returns),
            "max_return": _extreme(max, returns),
            "mean_length": self.mean_length(),
        }

    def __repr__(self) -> str:
        return f"InMemoryTracker(max_episodes={self.max_episodes}, episodes={len(self.episodes)})"


def _mean(values: list[float]) -> float:
    """The correctly rounded mean (``math.fsum``), so that long windows lose no precision."""
    try:
        return math.fsum(values) / len(values)
    except (ValueError, OverflowError):  # inf - inf, or finite values whose sum overflows
        return sum(values) / len(values)


def _extreme(pick: Callable[[list[float]], float], values: list[float]) -> float:
    """``min``/``max`` that is NaN when a value is, as the mean is (Python's skip a NaN
    unless it comes first, which would show finite extremes next to a NaN mean)."""
    return math.nan if any(math.isnan(v) for v in values) else pick(values)


class LoggingTracker:
    """Logs every finished episode with ``logger.info("episode_end", extra={...})``.

    The default logger is ``logging.getLogger("sekai.stats")``.
    """

    def __init__(self, logger: logging.Logger | logging.LoggerAdapter[Any] | None = None) -> None:
        if logger is not None and not callable(getattr(logger, "info", None)):
            raise TypeError(
                f"LoggingTracker: logger must be a logging.Logger (anything with .info()) or "
                f"None, got {type(logger).__name__}"
                + (
                    f"; for a logger by name, pass logging.getLogger({logger!r})."
                    if isinstance(logger, str)
                    else "."
                )
            )
        self.logger = logger if logger is not None else logging.getLogger("sekai.stats")
        self.num_episodes = 0
        self.num_steps = 0

    def on_reset(self, env_id: str | None, seed: int | None) -> None:
        """Nothing is logged on reset."""

    def on_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        """Count the step."""
        self.num_steps += 1

    def on_episode_end(self, stats: EpisodeStats) -> None:
        """Log the episode's return, length, time and flags."""
        self.num_episodes += 1
        fields = {
            "episode_return": stats.episode_return,
            "episode_length": stats.episode_length,
            "elapsed_time": stats.elapsed_time,
            "terminated": stats.terminated,
            "truncated": stats.truncated,
        }
        _log_info(self.logger, "episode_end", fields)

    def summary(self) -> dict[str, Any]:
        """``{"num_episodes": n, "num_steps": m}``, or ``{}`` before anything happened."""
        if not self.num_episodes and not self.num_steps:
            return {}
        return {"num_episodes": self.num_episodes, "num_steps": self.num_steps}

    def __repr__(self) -> str:
        return f"LoggingTracker(logger={self.logger.name!r}, episodes={self.num_episodes})"


def _log_info(logger: Any, message: str, fields: dict[str, Any]) -> None:
    """``logger.info(message, extra=fields)``, keeping ``fields`` through a plain
    ``logging.LoggerAdapter``, whose ``process()`` replaces a call's ``extra`` with its own
    before Python 3.13 (its own fields are added to them). An adapter that overrides
    ``process``, ``info`` or ``log``, or merges ``extra`` itself, is called as it is."""
    if _plain_adapter(logger) and not getattr(logger, "merge_extra", False):
        message, kwargs = logger.process(message, {"extra": dict(fields)})
        _log_info(logger.logger, message, {**fields, **(kwargs.get("extra") or {})})
    else:
        logger.info(message, extra=fields)


def _plain_adapter(logger: Any) -> bool:
    adapter = logging.LoggerAdapter
    cls = type(logger)
    return isinstance(logger, adapter) and all(
        getattr(cls, name) is getattr(adapter, name) for name in ("process", "info", "log")
    )
