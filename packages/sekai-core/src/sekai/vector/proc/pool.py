"""The parent's side of the worker processes: starting, sending commands, stopping.

Every command is pickled for every worker before anything is sent; waiting for the replies and
reading them is ``Replies``'s, which a Pool is.

Where futexes are (Linux x86-64), a ``request`` goes through the workers' mailboxes in shared
memory when every command fits (``mail``): one wake-up for all workers, one for the parent.
Everything else still goes through the pipes, each message announced in the worker's mailbox
first, since a worker with a mailbox sleeps on its futex word, not on its pipe. A command that
finds its pipe full (the parent's ends are non-blocking) reads every pipe while it waits for
room (``_make_room``): the worker may be busy writing a long reply itself.

Besides those calls (``request``: one command to every worker, wait for every reply), commands
can be posted without waiting (``post``, for ``send()``): ``Replies`` keeps their replies for
``recv()``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.vector._contract.errors import dumps
from sekai.vector._remote import Items, Reply
from sekai.vector.proc import futex, processes, protocol
from sekai.vector.proc.handle import DIED, WorkerHandle
from sekai.vector.proc.mail import Mail
from sekai.vector.proc.replies import Call, Replies

__all__ = ["USE_MAIL", "Pool"]

# A write of at most PIPE_BUF bytes reaches the pipe whole or not at all, even if interrupted.
_ATOMIC = getattr(select, "PIPE_BUF", 0) - 4
# Whether the parent's ends of the pipes are non-blocking: written without waiting on a full
# one, reading the others meanwhile (``_make_room``).
_ROOM = hasattr(select, "poll")
# Whether new pools give their workers mailboxes (where futexes are); tests turn it off to run
# the pipes alone.
USE_MAIL = futex.AVAILABLE
# Seconds between looks for workers that died while idle, before a call: a look costs a
# system call over every pipe and sentinel, more than the rest of a cheap step's parent work.
_LOOK_EVERY = 0.05


class Pool(Replies):
    """The worker processes of one ProcVecEnv."""

    def __init__(self, ctx: BaseContext, slices: Sequence[tuple[int, int]]) -> None:
        super().__init__()
        self.ctx = ctx
        self.slices = list(slices)
        self._look_after = 0.0  # when raise_if_dead() looks at the workers again
        self._lifeline: Connection | None = None
        self._stopping = False  # stop() began: a later one only finishes what it left

    # -- starting ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start one process per slice (the caller cleans up with ``stop()`` if this raises)."""
        if self.ctx.get_start_method() == "forkserver":
            processes.start_fork_server(self.ctx)
        lifeline_r, self._lifeline = self.ctx.Pipe(duplex=False)
        fork = self.ctx.get_start_method() == "fork"
        if USE_MAIL:  # None where /dev/shm has no room: warned to ProcVecEnv's caller
            self.mail = Mail.create_for(self.slices)
        mail = None if self.mail is None else (self.mail.name, len(self.slices), self.mail.capacity)
        try:
            for index, (lo, hi) in enumerate(self.slices):
                conn, child = self.ctx.Pipe()
                # With fork the child inherits every descriptor: give it the parent's ends to
                # close, so that the parent's death (or close()) is seen as EOF.
                inherited = [self._lifeline, *(w.conn for w in self.workers), conn] if fork else []
                try:
                    process = processes.spawn(self.ctx, index, child, lifeline_r, inherited, mail)
                except BaseException:
                    conn.close()
                    raise
                if _ROOM:  # never wait on a full pipe: read the others meanwhile (_make_room);
                    # before the channel is made (its reads hold Ctrl-C on such an end only)
                    os.set_blocking(conn.fileno(), False)
                handle = WorkerHandle(index, lo, hi, process, conn)
                self.workers.append(handle)
                self._poller.add(handle)
        finally:
            lifeline_r.close()

    def started(self) -> None:
        """Every worker answered a command, so has its mailbox mapped: unlink the block's name
        (no name is left to leak, whatever happens later)."""
        if self.mail is not None:
            self.mail.unlink()

    # -- commands ----------------------------------------------------------------------------

    def raise_if_dead(self, *, look: bool = True) -> None:
        """Raise the error of the first dead worker (every call needs all of them).

        With ``look``, first notice the workers that died while idle (and drop stale replies),
        at most every ``_LOOK_EVERY`` seconds: a worker that died since is found while the
        call waits for it, as one that dies during the call is.
        """
        if look and time.monotonic() >= self._look_after:
            for handle, is_sentinel in self._poller.wait(0):
                self._read(handle, is_sentinel)
            self._look_after = time.monotonic() + _LOOK_EVERY
        for handle in self.workers:
            if handle.dead is not None:
                raise handle.death()

    def request(
        self,
        op: int,
        arguments: Sequence[Any],
        timeout: float | None,
        what: str,
        per_env: Items | None = None,
        workers: Sequence[int] | None = None,
    ) -> list[Reply]:
        """Send ``op`` with ``arguments[i]`` to worker ``i`` and collect every reply.

        Args:
            op: the command (``protocol``).
            arguments: one argument per worker (per worker of ``workers``).
            timeout: seconds to wait for the replies (None: no limit); a worker that does not
                answer in time is stopped and reported as dead.
            what: what the arguments hold, for the error when they cannot be pickled.
            per_env: the per-sub-env items in the arguments, to name the sub-env whose item
                cannot be pickled.
            workers: the indices of the workers to ask, in order (None: all), through pipes.

        Raises:
            TypeError: an argument cannot be pickled (nothing was sent).
            VecEnvWorkerError: a worker is known to be dead (nothing was sent).
        """
        self.raise_if_dead()
        handles = self.workers if workers is None else [self.workers[i] for i in workers]
        messages = self.encode(op, arguments, what, per_env, handles)
        mail = self.mail if workers is None else None  # a mailbox command goes to every worker
        if mail is not None and max(map(len, messages)) <= mail.capacity and mail.free():
            seqs, tree = self._number(), self._tree()
            mail.put_all(seqs, messages)
            return self._mailed(op, tree, timeout)
        for handle in handles:
            handle.seq += 1
        call = Call(timeout, protocol.name(op))
        self._send_all(handles, messages, call)
        return self._replies(self._collect(handles, call, kill=True), handles)

    def encode(
        self,
        op: int,
        arguments: Sequence[Any],
        what: str,
        per_env: Items | None = None,
        handles: Sequence[WorkerHandle] | None = None,
    ) -> list[bytes]:
        """The messages of ``request`` to ``handles`` (None: every worker), each numbered as
        its worker's next command; nothing is sent (a caller may check that its arguments
        can be sent before it changes anything).

        Raises:
            TypeError: an argument cannot be pickled (as for ``request``).
        """
        handles = self.workers if handles is None else handles
        return [h.encode(op, a, what, per_env) for h, a in zip(handles, arguments)]

    def shares(self, size: int) -> bool:
        """Whether a command of ``size`` bytes (after its head) for every worker alike can go
        through the mailboxes now, once for all (``request_common``)."""
        mail = self.mail
        return mail is not None and protocol.HEAD + size <= mail.capacity and mail.free()

    def request_common(self, op: int, payload: bytes, timeout: float | None) -> list[Reply]:
        """``request`` with the same encoded argument for every worker, put in the mailboxes
        once (``shares`` said it can)."""
        self.raise_if_dead()
        mail = self.mail
        assert mail is not None
        seqs, tree = self._number(), self._tree()
        mail.put_common(seqs, protocol.head(0, op) + payload)
        return self._mailed(op, tree, timeout)

    def _number(self) -> list[int]:
        """Number every worker's next command (a reply to it must never answer a later call)."""
        seqs = []
        for handle in self.workers:
            handle.seq += 1
            seqs.append(handle.seq)
        return seqs

    def _tree(self) -> bool:
        """Whether the workers can be woken in a tree (``Mail.ring``): not while one that wakes
        others is still busy with an earlier command (posted by send() and dropped by reset(),
        or cut short by Ctrl-C), which would hold them back. Before the new commands are put."""
        mail = self.mail
        assert mail is not None
        return all(h.heard >= h.piped and mail.idle(h.index) for h in self.workers[: mail.relaying])

    def _mailed(self, op: int, tree: bool, timeout: float | None) -> list[Reply]:
        """Wake the workers to the commands just put in their mailboxes; their replies."""
        mail = self.mail
        assert mail is not None
        mail.ring(None if tree else futex.ALL)
        bodies = self._collect_mail(self.workers, timeout, protocol.name(op))
        return self._replies(bodies, self.workers)

    @staticmethod
    def _replies(bodies: list[Any], handles: Sequence[WorkerHandle]) -> list[Reply]:
        """Each reply of ``handles`` decoded from its body (None: the worker's death)."""
        return [h.decode(b) if b is not None else h.lost() for h, b in zip(handles, bodies)]

    def post(
        self,
        op: int,
        posts: Sequence[tuple[WorkerHandle, Any, Any]],
        what: str,
        posted: Callable[[Any], None],
        per_env: Items | None = None,
        timeout: float | None = None,
    ) -> None:
        """Send ``op`` with an argument to some workers without waiting for the replies.

        Args:
            op: the command (``protocol``).
            posts: ``(worker, argument, env_ids)``; the reply is kept as an ``Arrival`` for
                those sub-envs.
            what: what the arguments hold, for the error when they cannot be pickled.
            posted: called with a post's ``env_ids`` once its command is in the worker's
                pipe (or the worker is found dead: it answers with its death), not for a
                command an interrupt (``_interrupts.interruptible``) kept from its worker.
            per_env: the per-sub-env items in the arguments, to name the sub-env whose item
                cannot be pickled.
            timeout: seconds a worker may take to read a command longer than its pipe holds
                (None: no limit); one that does not is stopped, and answers with its death.

        Raises:
            TypeError: an argument cannot be pickled (nothing was sent).
            VecEnvWorkerError: a worker is known to be dead (nothing was sent).
        """
        self.raise_if_dead()
        handles = [handle for handle, _, _ in posts]
        messages = [handle.encode(op, argument, what, per_env) for handle, argument, _ in posts]
        for handle in handles:
            handle.seq += 1

        def keep(index: int, handle: WorkerHandle) -> None:
            tag = posts[index][2]
            handle.posted[handle.seq] = tag
            posted(tag)

        call = Call(timeout, protocol.name(op))
        self._send_all(handles, messages, call, keep)
        for handle in handles:
            if handle.dead is not None:
                self._lose_posted(handle)

    def _send_all(
        self,
        handles: Sequence[WorkerHandle],
        messages: Sequence[bytes],
        call: Call,
        keep: Callable[[int, WorkerHandle], None] | None = None,
    ) -> None:
        """Send each worker its message (numbered ``handle.seq``) through its pipe; with
        mailboxes, announce them and wake the workers first (they sleep on their futex word,
        and read a long message while it is written). With ``keep``, each is a posted
        command: ``keep(i, handle)`` records the ``i``-th once it is sent, before the next
        is (a wait for room in that one's pipe reads the pipes, its reply included).

        While a pipe is full, every pipe is read (``_make_room``), and a worker that takes no
        more of its command before ``call``'s deadline is stopped.
        """
        self._quiet = False
        mail = self.mail
        if mail is not None:
            bits = 0
            for handle in handles:
                mail.announce(handle.index, handle.seq)
                bits |= mail.bit(handle.index)
            mail.ring(bits)
        for index, (handle, message) in enumerate(zip(handles, messages)):
            self._send(handle, message, call)
            if keep is not None:
                keep(index, handle)

    def _send(self, handle: WorkerHandle, message: bytes, call: Call) -> None:
        if handle.dead is not None:
            return
        room = functools.partial(self._make_room, handle, call) if _ROOM else None
        try:
            handle.channel.write(message, room)
            handle.piped = handle.seq
        except (OSError, ValueError):  # its end is closed: it died (or was stopped)
            self._bury(handle, "EOFError", DIED, handle.ending())
        except BaseException:
            # Interrupted mid-message (a long one may be, whatever cut says on Windows): the
            # pipe is out of step.
            if len(message) > _ATOMIC or handle.channel.cut:
                self._bury(
                    handle, "EOFError", "worker process stopped: a command to it was cut short"
                )
            raise

    # -- stopping ----------------------------------------------------------------------------

    def stop(
        self, timeout: float | None, *, interrupted: bool = False
    ) -> list[tuple[int, VecEnvWorkerError]]:
        """Close the sub-envs and stop every worker; their close errors by sub-env.

        Waits ``timeout`` seconds in all (None: as long as they take) for the workers to close
        their sub-envs and exit, then terminates the remaining ones (and tells their watchdogs
        the parent is gone), then kills those that ignore it. Releases every process and pipe
        even when interrupted: then after a short grace, not the whole ``timeout``; the same
        when the caller was ``interrupted`` already (Ctrl-C while the ProcVecEnv was built). A
        second interrupt may cut that short too (``released`` stays False): the next ``stop()``
        ends what is left after the same grace, without closing the sub-envs again.
        """
        errors: list[tuple[int, VecEnvWorkerError]] = []
        if self._stopping:
            self._force(time.monotonic() + processes.GRACE)
            return errors
        self._stopping = True
        if interrupted:
            timeout = processes.GRACE if timeout is None else min(timeout, processes.GRACE)
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        try:
            live = [h for h in self.workers if h.dead is None]
            close = dumps(None)
            messages = [protocol.head(h.seq + 1, protocol.CLOSE) + close for h in live]
            for handle in live:
                handle.seq += 1
            call = Call(timeout, "close")
            self._send_all(live, messages, call)
            for handle, body in zip(live, self._collect(live, call, kill=False)):
                if body is not None:  # else it died or is late: it is stopped below
                    errors.extend(handle.decode(body).errors)
        except (KeyboardInterrupt, SystemExit):  # asked to stop now: not at the deadline
            deadline = min(deadline, time.monotonic() + processes.GRACE)
            raise
        finally:
            self._force(deadline)
        return errors

    def disown(self) -> None:
        """In a child forked from the parent (os.fork): leave the workers to the parent. They
        are no children of this process (its exit must not terminate them), and its copies of
        their pipes and of the lifeline are closed (they would keep a worker whose parent died
        waiting for this process). Nothing is sent, waited for or unregistered."""
        for handle in self.workers:
            processes.forget(handle.process)
            with contextlib.suppress(OSError):
                handle.conn.close()
        if self._lifeline is not None:
            with contextlib.suppress(OSError):
                self._lifeline.close()
            self._lifeline = None

    @property
    def released(self) -> bool:
        """Whether ``stop()`` released everything: every process reaped, the mailboxes freed."""
        return self.mail is None and self._lifeline is None and not self.unreaped()

    def unreaped(self) -> list[Any]:
        """The worker processes not reaped and closed by ``stop()`` yet."""
        return [h.process for h in self.workers if not processes.closed(h.process)]

    def _force(self, deadline: float) -> None:
        # Every step here may be repeated (stop() after an interrupted one): a step cut short
        # is done again, one done is done again harmlessly.
        try:
            processes.end(self.unreaped(), self._lifeline, deadline)
        finally:
            for handle in self.workers:
                self._poller.remove(handle)
                handle.conn.close()
                if handle.dead is None:
                    handle.dead = handle.failure("EOFError", DIED)
                with contextlib.suppress(ValueError):  # still running: the next stop() ends it
                    handle.process.close()
            if self._lifeline is not None:
                self._lifeline.close()
                self._lifeline = None
            if self.mail is not None:
                self.mail.release(owner=True)
                self.mail = None
