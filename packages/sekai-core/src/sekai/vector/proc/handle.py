"""A worker process as the parent sees it: its pipe, its sub-envs, its command numbers and how
it died; the errors and messages that name it."""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.vector._contract.errors import dumps, worker_error_class
from sekai.vector._remote import Items
from sekai.vector.proc import frames

__all__ = ["DIED", "LOST", "WorkerHandle", "unpicklable"]

DIED = "worker process exited unexpectedly"
LOST = (
    "worker process stopped: part of its reply was lost to an interrupt (Ctrl-C), so its pipe "
    "could not be read in step any more"
)


class WorkerHandle:
    """A worker process, its pipe and the sub-envs ``lo:hi`` it runs."""

    __slots__ = (
        "channel",
        "conn",
        "dead",
        "heard",
        "hi",
        "index",
        "lo",
        "piped",
        "posted",
        "process",
        "seq",
    )

    def __init__(self, index: int, lo: int, hi: int, process: Any, conn: Connection) -> None:
        self.index = index
        self.lo = lo
        self.hi = hi
        self.process = process
        self.conn = conn
        self.channel = frames.channel(conn)
        self.seq = 0
        self.piped = 0  # the last command written to its pipe
        self.heard = 0  # the last command whose reply was read from its pipe
        self.dead: VecEnvWorkerError | None = None  # why it is dead, once it is
        self.posted: dict[int, Any] = {}  # seq -> tag of the posted commands not answered yet

    def failure(self, exc_type: str, message: str, cls: type | None = None) -> VecEnvWorkerError:
        """The error naming this worker (and its sub-envs when it runs several), deriving
        from ``cls`` too when given."""
        return worker_error_class(cls)(
            self.lo, exc_type, message, worker=self.index, ranks=range(self.lo, self.hi)
        )

    def death(self) -> VecEnvWorkerError:
        """A new error like the one this worker died with (each call raises its own)."""
        dead = self.dead or self.failure("EOFError", DIED)
        return type(dead)(
            dead.rank, dead.exc_type, dead.message, worker=dead.worker, ranks=dead.ranks
        )


def unpicklable(what: str, handle: WorkerHandle, per_env: Items | None, exc: Exception) -> str:
    """The message for a command that cannot be pickled, naming the sub-env when it can."""
    where = "to the worker processes"
    for rank in range(handle.lo, handle.hi):
        if per_env is None:
            break
        try:
            dumps(per_env[rank])
        except Exception:
            where = f"for sub-env {rank} to its worker process"
            break
    return (
        f"ProcVecEnv cannot send {what} {where}: it cannot be pickled "
        f"({type(exc).__name__}: {exc})."
    )
