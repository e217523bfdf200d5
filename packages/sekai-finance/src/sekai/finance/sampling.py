"""Episode samplers: where in a price history each episode's window begins."""

from __future__ import annotations

import abc
import copy

import numpy as np

from sekai.finance._values import check_count, is_int, scalar
from sekai.finance.data import MarketData
from sekai.finance.timestamps import time_hint
from sekai.vector.spawnable import Spawnable

__all__ = [
    "EpisodeSampler",
    "FixedStart",
    "RandomStart",
    "SequentialStart",
    "as_sampler",
    "check_fixed_start",
    "draw_window_start",
    "sequential_lanes",
    "window_start_from_option",
]


def _beyond(start: int, n_starts: int) -> ValueError:
    return ValueError(f"start {start} is beyond the last window start {n_starts - 1}.")


class EpisodeSampler(Spawnable):
    """Chooses the window position of each episode in a history of ``n_starts`` windows."""

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, n_starts: int, episode_length: int) -> int:
        """Return a window position in ``[0, n_starts)``; draw any randomness from ``rng``."""

    def reset(self) -> None:
        """Forget per-env state (position, epoch); a no-op by default."""

    def spawn(self) -> EpisodeSampler:
        """The sampler one more independent env should use: ``self`` (shared) by default.

        Sharing stops at the process: under ``ProcVecEnv`` each worker holds its own copy,
        shared by that worker's sub-envs, so a shared sampler that keeps state gives results
        that depend on ``num_workers``. Return a fresh copy (as ``SequentialStart`` does) for
        the same windows on every backend.
        """
        return self


class RandomStart(EpisodeSampler):
    """A uniformly random window: ``int(rng.integers(0, n_starts))``."""

    def sample(self, rng: np.random.Generator, n_starts: int, episode_length: int) -> int:
        """Draw one window position uniformly."""
        return int(rng.integers(0, n_starts))

    def __repr__(self) -> str:
        return "RandomStart()"


class SequentialStart(EpisodeSampler):
    """Windows ``start, start + s, start + 2s, ...`` with ``s = stride or episode_length``.

    After handing out the last window that fits, ``epoch`` increases by one and the position
    wraps to ``start``. ``spawn()`` returns a fresh copy, so every env replays the same windows.

    Args:
        start: the first window position (``>= 0``).
        stride: rows between consecutive windows (``>= 1``); None means one episode length.
    """

    def __init__(self, start: int = 0, stride: int | None = None) -> None:
        self.start = check_count("start", start)
        self.stride = None if stride is None else check_count("stride", stride, 1, none_ok=True)
        self.epoch = 0
        self._next = self.start

    def sample(self, rng: np.random.Generator, n_starts: int, episode_length: int) -> int:
        """Hand out the next window position."""
        if self.start >= n_starts:
            raise _beyond(self.start, n_starts)
        if self._next >= n_starts:  # the history shrank under the stored position
            self._next = self.start
        position = self._next
        self._next = position + (self.stride or int(episode_length))
        if self._next >= n_starts:
            self.epoch += 1
            self._next = self.start
        return position

    def reset(self) -> None:
        """Back to ``start`` and epoch 0."""
        self._next = self.start
        self.epoch = 0

    def spawn(self) -> SequentialStart:
        """A fresh copy (of the same class) with the same ``start`` and ``stride``."""
        fresh = copy.deepcopy(self)
        fresh.reset()
        return fresh

    def __repr__(self) -> str:
        return f"SequentialStart(start={self.start}, stride={self.stride})"


class _SequentialLane(EpisodeSampler):
    """Lane ``lane`` of ``lanes`` splitting one ``SequentialStart``'s walk: the windows it would
    hand out at its episodes ``lane``, ``lane + lanes``, ``lane + 2 * lanes``, ... (wrapping round
    as it does), so the lanes together visit its windows in its order."""

    def __init__(self, sequential: SequentialStart, lane: int, lanes: int) -> None:
        self.start, self.stride = sequential.start, sequential.stride
        self.lane, self.lanes = lane, lanes
        self.episodes = 0

    def sample(self, rng: np.random.Generator, n_starts: int, episode_length: int) -> int:
        """The window of this lane's next episode of the shared walk."""
        if self.start >= n_starts:
            raise _beyond(self.start, n_starts)
        step = self.stride or int(episode_length)
        windows = (n_starts - 1 - self.start) // step + 1  # start + j * step < n_starts
        episode = self.lane + self.episodes * self.lanes
        self.episodes += 1
        return self.start + episode % windows * step

    def reset(self) -> None:
        """Back to this lane's first episode."""
        self.episodes = 0

    def spawn(self) -> _SequentialLane:
        """A fresh copy of this lane."""
        fresh = copy.copy(self)
        fresh.reset()
        return fresh

    def __repr__(self) -> str:
        sequential = f"SequentialStart(start={self.start}, stride={self.stride})"
        return f"{sequential} lane {self.lane} of {self.lanes}"


def sequential_lanes(sampler: EpisodeSampler, lanes: int) -> list[EpisodeSampler] | None:
    """``lanes`` samplers, one per sub-env, that together hand out the windows of ``sampler``
    (a ``SequentialStart``, whose walk is known) in its order: sub-env ``i`` takes its episodes
    ``i``, ``i + lanes``, ...; None for any other sampler."""
    if not isinstance(sampler, SequentialStart):
        return None
    if type(sampler).sample is not SequentialStart.sample:  # walks windows the lanes do not know
        return None
    return [_SequentialLane(sampler, lane, lanes) for lane in range(lanes)]


class FixedStart(EpisodeSampler):
    """Always the same window position."""

    def __init__(self, start: int) -> None:
        self.start = check_count("start", start)

    def sample(self, rng: np.random.Generator, n_starts: int, episode_length: int) -> int:
        """Return ``start`` (if it fits)."""
        if self.start >= n_starts:
            raise _beyond(self.start, n_starts)
        return self.start

    def __repr__(self) -> str:
        return f"FixedStart({self.start})"


def as_sampler(value: object) -> EpisodeSampler:
    """Normalise ``sampler=``: an EpisodeSampler, an int, ``"random"`` or ``"sequential"``."""
    if isinstance(value, EpisodeSampler):
        return value
    if is_int(value):
        return FixedStart(int(value))
    if isinstance(value, str) and value == "random":
        return RandomStart()
    if isinstance(value, str) and value == "sequential":
        return SequentialStart()
    raise ValueError(
        "sampler must be an EpisodeSampler, an int (a fixed window start), 'random' or "
        f"'sequential'; got {value!r}."
    )


def first_valid_window(n_starts: int, *, lookback: int, warmup: int) -> int:
    """The first window whose first decision is not a warm-up row; ``ValueError`` if none fits."""
    first = max(0, warmup - lookback)
    if n_starts - first <= 0:
        raise ValueError(
            f"no episode fits after the {warmup} warm-up rows: the history has {n_starts} "
            f"window starts and the first usable one would be {first}; use more data, a shorter "
            "episode_length or fewer warm-up rows."
        )
    return first


def draw_window_start(
    sampler: EpisodeSampler,
    rng: np.random.Generator,
    n_starts: int,
    episode_length: int,
    *,
    lookback: int = 0,
    warmup: int = 0,
) -> int:
    """Ask ``sampler`` for a window start, skipping windows that would decide on warm-up rows."""
    first = first_valid_window(n_starts, lookback=lookback, warmup=warmup)
    try:
        position = sampler.sample(rng, n_starts - first, episode_length)
    except ValueError as exc:
        if first == 0:
            raise
        raise ValueError(
            f"{exc} (positions count from the first window after the {warmup} warm-up rows: "
            f"position p starts the window at row {first} + p, first decision at row "
            f"{first + lookback} + p)"
        ) from exc
    if not is_int(position) or not 0 <= int(position) < n_starts - first:
        raise ValueError(
            f"{sampler!r}.sample() returned {position!r}; expected an int in "
            f"[0, {n_starts - first})."
        )
    return first + int(position)


def check_fixed_start(
    sampler: EpisodeSampler, n_starts: int, episode_length: int, *, lookback: int, warmup: int
) -> None:
    """Refuse a ``FixedStart`` beyond the history's windows when the env is built, with the
    error its first reset would raise (other samplers choose only at reset)."""
    if isinstance(sampler, FixedStart):
        rng = np.random.default_rng(0)  # not drawn from: a fixed start needs no randomness
        try:
            draw_window_start(
                sampler, rng, n_starts, episode_length, lookback=lookback, warmup=warmup
            )
        except ValueError as exc:
            raise ValueError(f"sampler {sampler!r} does not fit this history: {exc}") from None


def window_start_from_option(
    start: object,
    timestamps: np.ndarray,
    *,
    lookback: int,
    n_starts: int,
    warmup: int = 0,
    data: MarketData | None = None,
) -> int:
    """Translate ``options={"start": t}`` (the first decision) into a window start row.

    ``t`` is an int row position (negative from the end), a ``Time``, or a timestamp looked up
    by value (first row at or after it); a 0-d array stands for the value it holds.
    """
    start = scalar(start)
    if isinstance(start, (bool, np.bool_)):
        raise TypeError("options['start'] must be a row position or a timestamp, got a bool.")
    n_rows = int(timestamps.shape[0])
    numeric_axis = timestamps.dtype.kind != "M"
    by_value = not is_int(start)
    if by_value:
        source = data if data is not None else MarketData(np.ones(n_rows), timestamps=timestamps)
        if isinstance(start, float) and not numeric_axis:
            raise TypeError(
                f"options['start'] is a number ({start!r}) but the time axis holds datetimes; "
                "pass a date, or an int row position."
            )
        try:
            row = source._row(start, "left", "options['start']")
        except TypeError:
            forms = (
                "a number or Time(number)"
                if numeric_axis
                else "a date string, date, datetime, numpy datetime64 or Time(date)"
            )
            kind = "numeric" if numeric_axis else "datetime"
            raise TypeError(
                f"options['start'] must be a row position (an int) or a timestamp (on this "
                f"{kind} time axis: {forms}); got {type(start).__name__} {start!r}."
            ) from None
    else:
        row = int(start)  # type: ignore[call-overload]
        if row < 0:
            row += n_rows
    lo = max(lookback, warmup)
    hi = lookback + n_starts - 1
    if not lo <= row <= hi:
        ts_lo = str(timestamps[lo]) if lo < n_rows else "?"
        ts_hi = str(timestamps[hi]) if 0 <= hi < n_rows else "?"
        where = f"row {row}" if 0 <= row < n_rows else f"row {row} (outside the data)"
        if not by_value and row != int(start):  # type: ignore[call-overload]
            counted = f"row {row}" if row >= 0 else f"{-row} rows before the data"
            where = f"{int(start)} ({counted}, counting from the end)"  # type: ignore[call-overload]
        if by_value:
            where = f"{start!r} (row {row})" if row < n_rows else f"{start!r} (after the data)"
        message = (
            f"options['start'] = {where} is not a valid first decision; valid range of first "
            f"decisions: rows {lo}..{hi} (timestamps {ts_lo} .. {ts_hi})."
        )
        if 0 <= row < min(warmup, n_rows):
            message += f" Row {row} is a warm-up row (the first {warmup} rows are lookback only)."
        if not by_value:
            message += time_hint(int(start), timestamps)  # type: ignore[call-overload]
        raise ValueError(message)
    return row - lookback
