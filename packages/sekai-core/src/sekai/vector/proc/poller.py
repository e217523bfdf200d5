"""Waiting on the workers' pipes and process sentinels together (``select.poll`` where there
is one, ``multiprocessing.connection.wait`` elsewhere)."""

from __future__ import annotations

import math
import select
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sekai.vector.proc.pool import WorkerHandle

__all__ = ["Poller"]


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
                self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    def remove(self, handle: WorkerHandle) -> None:
        for fd in [fd for fd, (h, _) in self._fds.items() if h is handle]:
            del self._fds[fd]
            if self._poll is not None:
                self._poll.unregister(fd)
        for obj in [obj for obj, (h, _) in self._objects.items() if h is handle]:
            del self._objects[obj]

    def wait(self, timeout: float | None) -> list[tuple[WorkerHandle, bool]]:
        """The (worker, is_sentinel) pairs that are ready; empty after ``timeout`` seconds."""
        if self._poll is None:
            return [self._objects[obj] for obj in wait(list(self._objects), timeout)]
        ms = None if timeout is None else max(0, math.ceil(timeout * 1000))
        fds = self._fds
        return [fds[fd] for fd, _ in self._poll.poll(ms) if fd in fds]
