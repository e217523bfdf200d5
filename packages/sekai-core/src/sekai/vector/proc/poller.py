"""Waiting on the workers' pipes and process sentinels together (``select.poll`` where there
is one, ``multiprocessing.connection.wait`` elsewhere)."""

from __future__ import annotations

import math
import select
import time
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sekai.vector.proc.handle import WorkerHandle

__all__ = ["SLICE", "Poller"]

# The longest one wait stays in the operating system. Python raises KeyboardInterrupt between
# bytecodes; a Ctrl-C that lands after the last check but before poll() starts does not
# interrupt poll(), so an unbounded wait would keep it (and the user) waiting for good.
SLICE = 0.1  # seconds
_READ = select.POLLIN | select.POLLHUP | select.POLLERR if hasattr(select, "poll") else 0


class Poller:
    """Waits until pipes or process sentinels are ready (``select.poll``, reused across calls)."""

    def __init__(self) -> None:
        self._poll = select.poll() if hasattr(select, "poll") else None
        self._fds: dict[int, tuple[WorkerHandle, bool]] = {}
        self._objects: dict[Any, tuple[WorkerHandle, bool]] = {}

    def add(self, handle: WorkerHandle) -> None:
        for obj, is_sentinel in ((handle.conn, False), (handle.process.sentinel, True)):
            fd = obj if isinstance(obj, int) else obj.fileno()
            self._fds[fd] = (handle, is_sentinel)
            self._objects[obj] = (handle, is_sentinel)
            if self._poll is not None:
                self._poll.register(fd, _READ)

    def remove(self, handle: WorkerHandle) -> None:
        for fd in [fd for fd, (h, _) in self._fds.items() if h is handle]:
            del self._fds[fd]
            if self._poll is not None:
                self._poll.unregister(fd)
        for obj in [obj for obj, (h, _) in self._objects.items() if h is handle]:
            del self._objects[obj]

    def wait(self, timeout: float | None) -> list[tuple[WorkerHandle, bool]]:
        """The (worker, is_sentinel) pairs that are ready; empty after ``timeout`` seconds
        (None: until one is). A pending Ctrl-C is raised within ``SLICE`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            span = SLICE if deadline is None else min(SLICE, deadline - time.monotonic())
            ready = self._wait_once(max(0.0, span))
            if ready or (deadline is not None and time.monotonic() >= deadline):
                return ready

    def wait_room(
        self, handle: WorkerHandle, timeout: float
    ) -> tuple[bool, list[tuple[WorkerHandle, bool]]]:
        """Wait at most ``timeout`` seconds for ``handle``'s pipe (registered) to take more bytes
        or for pipes or sentinels to be ready: whether it takes more, and those ready.

        Only where there is ``select.poll``: elsewhere the pipes are written without it.
        """
        assert self._poll is not None
        fd = handle.conn.fileno()
        self._poll.modify(fd, _READ | select.POLLOUT)
        try:
            events = self._poll.poll(math.ceil(timeout * 1000))
        finally:
            self._poll.modify(fd, _READ)
        fds = self._fds
        room = any(ready == fd and event & select.POLLOUT for ready, event in events)
        return room, [fds[f] for f, event in events if f in fds and event & _READ]

    def _wait_once(self, timeout: float) -> list[tuple[WorkerHandle, bool]]:
        if self._poll is None:
            return [self._objects[obj] for obj in wait(list(self._objects), timeout)]
        fds = self._fds
        return [fds[fd] for fd, _ in self._poll.poll(math.ceil(timeout * 1000)) if fd in fds]
