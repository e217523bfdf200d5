"""The shared-memory block workers write step results into (fixed-size spaces, core.md §4).

It holds a batch of observations and, after it, the rewards and the termination and truncation
flags of every sub-env: the fixed-size part of a step's result, so a worker's reply only
carries what has no fixed size (the infos).

The parent creates the block, every worker attaches to it, then the parent unlinks its name at
once: the mapping lives on in every process that has it, and no name is left behind whatever
happens later (even SIGKILL). Only the parent registers the block with multiprocessing's
resource tracker, and its ``unlink()`` unregisters it, so the tracker never reports a leak.

The parent reserves every page of a block when it creates it (``create_segment``): a tmpfs file
sized by ftruncate alone gets its pages as they are first written, and one written past the
free space of /dev/shm (64 MB in a Docker container) kills the writer, a worker mid-call, with
SIGBUS. Reserved, a block that does not fit fails at construction instead (``NoRoom``).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import secrets
import sys
import warnings
from collections.abc import Callable
from multiprocessing import resource_tracker, shared_memory
from typing import Any

import numpy as np

from sekai._warnings import caller_stacklevel
from sekai.error import SharedMemoryWarning
from sekai.spaces import Dict, Space, Tuple
from sekai.spaces._kinds import ARRAY_SPACES, fold_leaves
from sekai.spaces.batch import create_empty_array
from sekai.vector._contract.batching import copy_batch, take_rows

__all__ = [
    "MORE_ROOM",
    "NoRoom",
    "SharedBatch",
    "Writer",
    "create_segment",
    "is_fixed_size",
    "row_writer",
    "warn_no_room",
    "write_at",
    "write_rows",
]

_ALIGN = 64  # every part starts on its own cache line
_SHM = "/dev/shm"  # where POSIX shared memory lives on Linux
# posix_fallocate's answers for a block that does not fit: tmpfs full, or its memory cgroup.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EFBIG, errno.ENOMEM})
# Its answers where the filesystem cannot reserve (not tmpfs): the block is used unreserved.
_CANNOT_RESERVE = frozenset({errno.EINVAL, errno.EOPNOTSUPP, errno.ENOSYS})
MORE_ROOM = "give /dev/shm more room (with Docker: docker run --shm-size=1g ...)"
_MORE_MEMORY = "raise that memory limit (with Docker: docker run --memory=...)"


def is_fixed_size(space: Space[Any]) -> bool:
    """Whether every part of ``space`` has a fixed shape and dtype: Box, Discrete,
    MultiDiscrete, MultiBinary, and Dict / Tuple / MaskedBox of them."""
    return fold_leaves(space, lambda leaf: isinstance(leaf, ARRAY_SPACES), all)


class _Layout:
    """``create_empty_array``'s allocator: consecutive aligned arrays in one buffer."""

    def __init__(self, buffer: Any = None) -> None:
        self.buffer = buffer
        self.size = 0

    def __call__(self, shape: tuple[int, ...], dtype: Any) -> Any:
        dtype = np.dtype(dtype)
        offset = -(-self.size // _ALIGN) * _ALIGN
        self.size = offset + math.prod(shape) * dtype.itemsize
        if self.buffer is None:
            return None
        return np.ndarray(shape, dtype=dtype, buffer=self.buffer, offset=offset)


def _slice(batch: Any, lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of a batch of a fixed-size space (dicts and tuples of arrays)."""
    if isinstance(batch, dict):
        return {key: _slice(part, lo, hi) for key, part in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_slice(part, lo, hi) for part in batch)
    return batch[lo:hi]


class _Segment(shared_memory.SharedMemory):
    """A SharedMemory whose garbage collection never complains about live array views."""

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class NoRoom(OSError):
    """A new block does not fit: in /dev/shm (``ENOSPC``), or in the memory limit of this
    process (``ENOMEM``: its cgroup, or container). The message names what it would hold, its
    size and the space free; ``more`` says how to make room. No block is left behind."""

    more = MORE_ROOM


def _size(size: int) -> str:
    """``size`` bytes for a person: "512 bytes", "3.5 KiB", "12.0 MiB" (never "0.0 MiB")."""
    if size < 1 << 10:
        return f"{size} bytes"
    if size < 1 << 20:
        return f"{size / (1 << 10):.1f} KiB"
    return f"{size / (1 << 20):.1f} MiB"


def _no_room(size: int, what: str, code: int) -> NoRoom:
    reserve = f"cannot reserve {_size(size)} of shared memory for {what}"
    if code == errno.ENOMEM:  # /dev/shm may have room to spare: the memory limit has none
        exc = NoRoom(code, f"{reserve}: the memory limit of this process (cgroup) was reached")
        exc.more = _MORE_MEMORY
        return exc
    try:
        stat = os.statvfs(_SHM)
    except (OSError, AttributeError):  # no /dev/shm (not Linux): its space is unknown
        free = ""
    else:
        free = f": {_SHM} has {_size(stat.f_bavail * stat.f_frsize)} free"
        free += f" (of {_size(stat.f_blocks * stat.f_frsize)})"
    return NoRoom(errno.ENOSPC, f"{reserve}{free}")


def create_segment(name: str, size: int, what: str) -> _Segment:
    """A new block of ``size`` bytes named ``name`` with its pages reserved (parent side).

    Raises:
        NoRoom: it does not fit; ``what`` it would hold is named in the message.
    """
    segment = _Segment(name, create=True, size=size)
    reserve = getattr(os, "posix_fallocate", None)  # not on macOS: used unreserved, as there
    try:
        if reserve is not None:
            reserve(segment._fd, 0, size)  # type: ignore[attr-defined,unused-ignore]
    except OSError as exc:
        if exc.errno in _CANNOT_RESERVE:
            return segment
        _discard(segment)
        if exc.errno in _NO_ROOM:
            raise _no_room(size, what, exc.errno) from exc
        raise
    except BaseException:
        _discard(segment)
        raise
    return segment


def _discard(segment: _Segment) -> None:
    segment.close()
    with contextlib.suppress(FileNotFoundError):
        segment.unlink()


def warn_no_room(exc: NoRoom, instead: str, keep: str) -> None:
    """Warn ``SharedMemoryWarning``, at the user's line (a ProcVecEnv(), a make_vec()), that the
    block of ``exc`` does not fit, so ProcVecEnv does ``instead``; ``keep`` says how to make it
    fit."""
    message = f"ProcVecEnv {exc.strerror}, so {instead}. To keep shared memory, {keep}, or "
    message += f"{exc.more}."
    warnings.warn(message, SharedMemoryWarning, stacklevel=caller_stacklevel())


def _attach(name: str) -> _Segment:
    """Open an existing block without registering it with the resource tracker: the parent's
    registration is the only one, and its ``unlink()`` removes it."""
    if sys.version_info >= (3, 13):
        return _Segment(name, track=False)  # type: ignore[call-arg,unused-ignore]
    register = resource_tracker.register
    resource_tracker.register = lambda name, rtype: None
    try:
        return _Segment(name)
    finally:
        resource_tracker.register = register


def _lay_out(space: Space[Any], num_envs: int, layout: _Layout) -> tuple[Any, Any, Any, Any]:
    """The observation batch, rewards, terminated and truncated arrays, in this order."""
    batch = create_empty_array(space, num_envs, fn=layout)
    rewards = layout((num_envs,), np.float64)
    terminated = layout((num_envs,), np.bool_)
    truncated = layout((num_envs,), np.bool_)
    return batch, rewards, terminated, truncated


class SharedBatch:
    """A batch of ``num_envs`` step results of a fixed-size space in shared memory.

    Attributes:
        name: the block's name (unlinked once every worker attached).
        batch: the observations as ``create_empty_array`` builds them, viewing the block.
        rewards: ``float64`` array ``(num_envs,)`` viewing the block.
        terminated: ``bool`` array ``(num_envs,)`` viewing the block.
        truncated: ``bool`` array ``(num_envs,)`` viewing the block.
    """

    def __init__(self, segment: _Segment, space: Space[Any], num_envs: int) -> None:
        self._segment: _Segment | None = segment
        self.name = segment.name
        self.space = space
        parts = _lay_out(space, num_envs, _Layout(segment.buf))
        self.batch: Any = parts[0]
        self.rewards: Any = parts[1]
        self.terminated: Any = parts[2]
        self.truncated: Any = parts[3]
        self._unlinked = False

    @staticmethod
    def size(space: Space[Any], num_envs: int) -> int:
        """Bytes needed for ``num_envs`` step results of ``space``."""
        layout = _Layout()
        _lay_out(space, num_envs, layout)
        return layout.size

    @classmethod
    def create(cls, space: Space[Any], num_envs: int) -> SharedBatch:
        """A new block (parent side), named after this process so leaks are attributable.

        Raises:
            NoRoom: it does not fit in /dev/shm.
        """
        name = f"sekai_{os.getpid()}_{secrets.token_hex(4)}"
        size = max(cls.size(space, num_envs), 1)
        segment = create_segment(name, size, f"the observations of {num_envs} sub-envs")
        return cls(segment, space, num_envs)

    @classmethod
    def attach(cls, name: str, space: Space[Any], num_envs: int) -> SharedBatch:
        """The block created by the parent (worker side)."""
        return cls(_attach(name), space, num_envs)

    def rows(self, lo: int, hi: int) -> Any:
        """Views of observation rows ``lo:hi`` (a worker's sub-envs)."""
        return _slice(self.batch, lo, hi)

    def flags(self, lo: int, hi: int) -> tuple[Any, Any, Any]:
        """Views of the rewards, terminated and truncated of sub-envs ``lo:hi``."""
        return self.rewards[lo:hi], self.terminated[lo:hi], self.truncated[lo:hi]

    def take(self, rows: Any = None) -> tuple[Any, Any, Any, Any]:
        """Copies of the observations, rewards, terminated and truncated of sub-envs ``rows``
        (an index array; None: all), which the workers may overwrite after this."""
        if rows is None:
            observations = copy_batch(self.space, self.batch)
            return observations, self.rewards.copy(), self.terminated.copy(), self.truncated.copy()
        observations = take_rows(self.space, self.batch, rows)
        return observations, self.rewards[rows], self.terminated[rows], self.truncated[rows]

    def unlink(self) -> None:
        """Remove the block's name (parent side; the mappings stay valid)."""
        if not self._unlinked and self._segment is not None:
            with contextlib.suppress(FileNotFoundError):
                self._segment.unlink()
            self._unlinked = True  # only now: one that Ctrl-C cut short is done again

    def release(self) -> None:
        """Unlink (if needed) and unmap; the views must no longer be used."""
        self.unlink()  # before the block is let go: a release Ctrl-C cuts short leaks no name
        segment, self._segment = self._segment, None
        self.batch = self.rewards = self.terminated = self.truncated = None
        if segment is None:
            return
        with contextlib.suppress(BufferError):  # a view still alive: unmapped when it dies
            segment.close()

    def release_attached(self) -> None:
        """Unmap a worker's attachment (never unlinks: the parent owns the name)."""
        segment, self._segment = self._segment, None
        self.batch = self.rewards = self.terminated = self.truncated = None
        if segment is not None:
            with contextlib.suppress(BufferError):
                segment.close()


Writer = Callable[[Any, list[Any]], None]


def row_writer(space: Space[Any]) -> Writer:
    """A function writing a list of observations of ``space`` into rows of a batch, decided
    once per space.

    Each observation must have its part's shape (ValueError otherwise, where ``concatenate``
    could broadcast); values take the part's dtype as ``concatenate`` gives them (rule 3).
    """
    if isinstance(space, Dict):
        parts = {key: row_writer(child) for key, child in space.items()}

        def write_dict(rows: Any, items: list[Any]) -> None:
            for key, write in parts.items():
                write(rows[key], [item[key] for item in items])

        return write_dict
    if isinstance(space, Tuple):
        children = [row_writer(child) for child in space.spaces]

        def write_tuple(rows: Any, items: list[Any]) -> None:
            for index, write in enumerate(children):
                write(rows[index], [item[index] for item in items])

        return write_tuple
    shape = tuple(space.shape or ())

    def write_array(rows: Any, items: list[Any]) -> None:
        # Row by row: one copy straight into shared memory, and cheaper than np.stack.
        for index, item in enumerate(items):
            value = np.asarray(item)
            if value.shape != shape:
                raise ValueError(
                    f"observation of shape {value.shape} does not fit {space!r} (shape {shape})."
                )
            rows[index] = value

    return write_array


def write_rows(write: Writer, rows: Any, observations: list[Any]) -> list[tuple[int, Exception]]:
    """Write one observation per row with ``write`` (from ``row_writer``).

    Returns:
        The ``(row, exception)`` of every observation that does not fit its row (wrong shape
        or keys); the other rows are written.
    """
    try:
        write(rows, observations)
        return []
    except Exception:  # find the culprits: write row by row
        pass
    errors: list[tuple[int, Exception]] = []
    for index, observation in enumerate(observations):
        try:
            write(_slice(rows, index, index + 1), [observation])
        except Exception as exc:
            errors.append((index, exc))
    return errors


def write_at(
    write: Writer, rows: Any, positions: list[int] | None, observations: list[Any]
) -> list[tuple[int, Exception]]:
    """Write ``observations[i]`` into row ``positions[i]`` (row ``i`` when ``positions`` is
    None), skipping the None ones (sub-envs that failed).

    Returns:
        The ``(i, exception)`` of every observation that does not fit its row.
    """
    if positions is None and all(observation is not None for observation in observations):
        return write_rows(write, rows, observations)
    errors: list[tuple[int, Exception]] = []
    for index, observation in enumerate(observations):
        if observation is None:
            continue
        row = index if positions is None else positions[index]
        failures = write_rows(write, _slice(rows, row, row + 1), [observation])
        errors.extend((index, exc) for _, exc in failures)
    return errors
