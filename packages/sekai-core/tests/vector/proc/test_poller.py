"""The poller never blocks in the operating system for longer than SLICE seconds at a time, so a
Ctrl-C that arrives just before a wait begins (and so does not interrupt it) is still raised."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Any

import pytest

from sekai.vector.proc.poller import SLICE, Poller


class _Handle:
    """What the poller needs of a worker handle: a pipe end and a process sentinel."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.sentinel_r, self.sentinel_w = os.pipe()
        self.conn = self
        self.process = self
        self.sentinel = self.sentinel_r

    def fileno(self) -> int:
        return self.read_fd

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd, self.sentinel_r, self.sentinel_w):
            os.close(fd)


class _RecordingPoll:
    """A select.poll stand-in: nothing is ready for ``idle`` calls, then the pipe is."""

    def __init__(self, idle: int, ready_fd: int) -> None:
        self.idle = idle
        self.ready_fd = ready_fd
        self.timeouts: list[Any] = []

    def register(self, fd: int, mask: int) -> None:
        pass

    def poll(self, timeout: Any = None) -> list[tuple[int, int]]:
        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.idle:
            return []
        return [(self.ready_fd, 1)]


@pytest.fixture
def handle() -> Any:
    h = _Handle()
    yield h
    h.close()


def test_an_unbounded_wait_returns_to_python_every_slice(handle: Any) -> None:
    p = Poller()
    fake = _RecordingPoll(idle=5, ready_fd=handle.read_fd)
    p._poll = fake  # type: ignore[assignment]
    p.add(handle)
    assert p.wait(None) == [(handle, False)]
    assert len(fake.timeouts) == 6
    assert all(t is not None and 0 <= t <= SLICE * 1000 for t in fake.timeouts)


def test_a_bounded_wait_returns_empty_at_its_deadline(handle: Any) -> None:
    p = Poller()
    p.add(handle)
    start = time.monotonic()
    assert p.wait(2.5 * SLICE) == []
    assert time.monotonic() - start >= 2.5 * SLICE
    assert p.wait(0) == []


def test_a_ready_pipe_is_returned_at_once(handle: Any) -> None:
    p = Poller()
    p.add(handle)
    os.write(handle.write_fd, b"x")
    assert p.wait(None) == [(handle, False)]
    os.close(handle.sentinel_w)
    handle.sentinel_w = os.open(os.devnull, os.O_RDONLY)  # closed writer: sentinel ready
    assert set(p.wait(None)) == {(handle, False), (handle, True)}


def test_wait_room_tells_a_full_pipe_from_one_that_takes_more_and_returns_ready_pipes(
    handle: Any,
) -> None:
    ours, theirs = socket.socketpair()  # a worker's pipe, as multiprocessing.Pipe() makes it
    with ours, theirs:
        handle.conn = ours
        p = Poller()
        p.add(handle)
        ours.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            while True:
                ours.send(bytes(1 << 16))
        assert p.wait_room(handle, SLICE) == (False, [])
        theirs.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            while True:
                theirs.recv(1 << 16)
        assert p.wait_room(handle, SLICE) == (True, [])
        assert p.wait(0) == []  # back to waiting for replies only: writable is not ready
        theirs.send(b"reply")
        assert p.wait_room(handle, SLICE) == (True, [(handle, False)])
        assert p.wait(0) == [(handle, False)]


def test_a_wait_shorter_than_a_millisecond_sleeps_a_millisecond(handle: Any) -> None:
    p = Poller()
    fake = _RecordingPoll(idle=0, ready_fd=handle.read_fd)
    p._poll = fake  # type: ignore[assignment]
    p.add(handle)
    assert p.wait(0.0005) == [(handle, False)]
    assert fake.timeouts == [1]  # poll(0) would return at once: a busy loop until the deadline


def test_a_removed_worker_is_not_waited_for_without_select_poll(handle: Any) -> None:
    p = Poller()
    p._poll = None  # where the platform has no select.poll
    p.add(handle)
    os.write(handle.write_fd, b"x")
    assert p.wait(0) == [(handle, False)]
    p.remove(handle)
    assert p.wait(0) == []
