"""A worker process as the parent sees it: its pipe, its sub-envs, its command numbers and how
it died; its commands encoded and its replies decoded; the errors and messages that name it."""

from __future__ import annotations

import functools
from multiprocessing.connection import Connection
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.vector._contract.errors import dumps, noted, worker_error_class
from sekai.vector._remote import Items, Reply, read_reply
from sekai.vector.proc import frames, processes, protocol

__all__ = ["DIED", "LOST", "WorkerHandle", "unpicklable"]

DIED = "worker process exited unexpectedly"
# Reply(entries, errors), without the NamedTuple's own __new__ (a fifth of the cost): one per
# worker and step.
_reply = functools.partial(tuple.__new__, Reply)
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

    def encode(self, op: int, argument: Any, what: str, per_env: Items | None) -> bytes:
        """The message of command ``op`` with ``argument``, numbered as the next command (a
        STEP argument of type ``bytes`` is one already encoded, ``protocol.cut``).

        Raises:
            TypeError: ``argument`` cannot be pickled; ``what`` it holds, and ``per_env``
                its per-sub-env items, name what.
        """
        try:
            raw = op == protocol.STEP and type(argument) is bytes
            payload = argument if raw else dumps(argument)
        except Exception as exc:
            raise TypeError(unpicklable(what, self, per_env, exc)) from exc
        return protocol.head(self.seq + 1, op) + payload

    def decode(self, body: Any) -> Reply:
        """The reply whose body (after its seq) is ``body``; one that cannot be unpickled
        (e.g. a class that exists only in the worker) is this worker's error."""
        try:
            entries, errors = read_reply(body, self.lo, self.index)
        except Exception as exc:
            message = f"the reply cannot be unpickled in the parent process: {exc}"
            error = self.failure(type(exc).__name__, message, type(exc))
            return Reply(None, [(self.lo, error)])
        return _reply((entries, errors))

    def ending(self) -> str:
        """How the process ended, as a note for its ``DIED`` error ("The worker process was
        killed by SIGBUS."), where its exit status comes soon (a worker whose pipe closed is
        exiting); "" if not. The message itself stays as documented."""
        how = processes.ending(self.process, processes.EXIT_WAIT)
        return f"The worker process {how}." if how else ""

    def lost(self) -> Reply:
        """The reply of this worker's death, to a command it will never answer."""
        return Reply(None, [(self.lo, self.death())])

    def failure(
        self, exc_type: str, message: str, cls: type | None = None, note: str = ""
    ) -> VecEnvWorkerError:
        """The error naming this worker (and its sub-envs when it runs several), deriving
        from ``cls`` too when given, with ``note`` added when given."""
        error = worker_error_class(cls)(
            self.lo, exc_type, message, worker=self.index, ranks=range(self.lo, self.hi)
        )
        return noted(error, [note] if note else [])

    def death(self) -> VecEnvWorkerError:
        """A new error like the one this worker died with (each call raises its own)."""
        dead = self.dead or self.failure("EOFError", DIED)
        error = type(dead)(
            dead.rank, dead.exc_type, dead.message, worker=dead.worker, ranks=dead.ranks
        )
        return noted(error, getattr(dead, "__notes__", []))


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
