"""The parent's side of the worker processes: starting, commands, replies, dead workers, stopping.

Every command is pickled for every worker before anything is sent. Replies carry the command's
sequence number, so a reply left unread by an interrupted call is dropped. Waiting always
watches each worker's process sentinel as well as its pipe (a wait on the mailboxes looks at
them every 50 ms), so a dead worker is noticed (never waited on forever), and an optional
timeout stops a worker that does not answer.

Where futexes are (Linux x86-64), a ``request`` goes through the workers' mailboxes in shared
memory when every command fits (``mail``): one wake-up for all workers, one for the parent.
Everything else still goes through the pipes, each message announced in the worker's mailbox
first, since a worker with a mailbox sleeps on its futex word, not on its pipe. A command that
finds its pipe full (the parent's ends are non-blocking) reads every pipe while it waits for
room (``_make_room``): the worker may be busy writing a long reply itself.

Besides those calls (``request``: one command to every worker, wait for every reply), commands
can be posted without waiting (``post``, for ``send()``): their replies are kept as they arrive,
also while a call waits for its own, undecoded, until ``recv()`` has taken them (the pool is
its ``Inbox``): a reply whose unpickling Ctrl-C interrupts is unpickled again by the next one.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import time
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.vector._batches import Arrival
from sekai.vector._contract.errors import dumps
from sekai.vector._remote import Items, Reply
from sekai.vector.proc import frames, futex, poller, processes, protocol
from sekai.vector.proc.handle import DIED, LOST, WorkerHandle
from sekai.vector.proc.mail import Mail
from sekai.vector.proc.poller import Poller

__all__ = ["USE_MAIL", "Pool"]

# A dead worker's error is a plain VecEnvWorkerError, except a timeout's: `except TimeoutError`.
_DEAD_CLASSES: dict[str, type] = {"TimeoutError": TimeoutError}
# A write of at most PIPE_BUF bytes reaches the pipe whole or not at all, even if interrupted.
_ATOMIC = getattr(select, "PIPE_BUF", 0) - 4
# Whether the parent's ends of the pipes are non-blocking: written without waiting on a full
# one, reading the others meanwhile (``_make_room``).
_ROOM = hasattr(select, "poll")
# Whether new pools give their workers mailboxes (where futexes are); tests turn it off to run
# the pipes alone.
USE_MAIL = futex.AVAILABLE
# Seconds between checks for dead workers while the parent sleeps on its futex word (a dead
# worker never wakes it).
_MAIL_SLICE = 0.05
# Seconds between looks for workers that died while idle, before a call: a look costs a
# system call over every pipe and sentinel, more than the rest of a cheap step's parent work.
_LOOK_EVERY = 0.05
# Seconds the parent waits for more of a reply flowing through a pipe while it waits on its
# mailboxes (such a reply is stale; its worker reads its mailbox once it has written it all).
_DRAIN = 0.002


class _Call:
    """A call waiting for replies: when it times out, and the replies read while sending."""

    __slots__ = ("deadline", "early", "name", "timeout")

    def __init__(self, timeout: float | None, name: str, start: float | None = None) -> None:
        self.timeout = timeout
        self.name = name  # the command, for the timeout's error
        begin = time.monotonic() if start is None else start  # ``time.monotonic()``
        self.deadline = None if timeout is None else begin + timeout
        self.early: dict[int, Any] = {}  # worker -> reply body


class Pool:
    """The worker processes of one ProcVecEnv."""

    def __init__(self, ctx: BaseContext, slices: Sequence[tuple[int, int]]) -> None:
        self.ctx = ctx
        self.slices = list(slices)
        self.workers: list[WorkerHandle] = []
        self._poller = Poller()
        self._look_after = 0.0  # when raise_if_dead() looks at the workers again
        self._quiet = False  # no reply is due through a pipe or half read (``_flowing``)
        self._lifeline: Connection | None = None
        self.mail: Mail | None = None
        # Replies to posted commands, (worker, reply bytes) until recv() decodes them.
        self._arrived: deque[Arrival] = deque()

    # -- starting ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start one process per slice (the caller cleans up with ``stop()`` if this raises)."""
        if self.ctx.get_start_method() == "forkserver":
            processes.preload_worker(self.ctx)
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
                if _ROOM:  # never wait on a full pipe: read the others meanwhile (_make_room)
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
        messages = [h.encode(op, a, what, per_env) for h, a in zip(handles, arguments)]
        mail = self.mail if workers is None else None  # a mailbox command goes to every worker
        if mail is not None and max(map(len, messages)) <= mail.capacity and mail.free():
            seqs, tree = self._number(), self._tree()
            mail.put_all(seqs, messages)
            return self._mailed(op, tree, timeout)
        for handle in handles:
            handle.seq += 1
        call = _Call(timeout, protocol.name(op))
        self._send_all(handles, messages, call)
        return self._replies(self._collect(handles, call, kill=True), handles)

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
        per_env: Items | None = None,
        timeout: float | None = None,
    ) -> None:
        """Send ``op`` with an argument to some workers without waiting for the replies.

        Args:
            op: the command (``protocol``).
            posts: ``(worker, argument, env_ids)``; the reply is kept as an ``Arrival`` for
                those sub-envs.
            what: what the arguments hold, for the error when they cannot be pickled.
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
        call = _Call(timeout, protocol.name(op))
        self._send_all(handles, messages, call, [tag for _, _, tag in posts])
        for handle in handles:
            if handle.dead is not None:
                self._lose_posted(handle)

    def forget_posted(self) -> None:
        """Drop every posted command's reply, arrived or not (those to come are dropped)."""
        self._arrived.clear()
        for handle in self.workers:
            handle.posted.clear()

    # -- the inbox of recv() (``sekai.vector._batches.Inbox``) --------------------------------

    def wait(self, timeout: float | None, what: str) -> None:
        """Return once a reply to a posted command is kept, waiting for one if none is.

        A worker that dies answers each of its posted commands with its death; one that does not
        answer ``what`` within ``timeout`` seconds is stopped and answers the same way.

        Raises:
            RuntimeError: no command is posted.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._arrived:
            waiting = [h for h in self.workers if h.posted]
            if not waiting:
                raise RuntimeError("no posted command is waiting for its reply")
            remaining = None if deadline is None else deadline - time.monotonic()
            ready = self._pending(waiting) or self._poller.wait(remaining)
            if not ready and remaining is not None and remaining <= 0:
                self._time_out(waiting, what, timeout)
                break
            for handle, is_sentinel in ready:
                self._read(handle, is_sentinel)

    def first(self) -> Arrival | None:
        """The first reply kept, decoded (again, if an interrupt cut its decoding short)."""
        if not self._arrived:
            return None
        arrival = self._arrived[0]
        if arrival.reply is None:
            handle, body = arrival.raw
            arrival.reply = handle.decode(body)
        return arrival

    def drop(self) -> None:
        """Forget the first reply kept (recv() has it)."""
        self._arrived.popleft()

    def _keep(self, handle: WorkerHandle, seq: int, raw: Any, reply: Reply | None) -> None:
        """Keep the reply to the posted command ``seq`` for recv()."""
        arrival = Arrival(handle.posted[seq], raw, reply)
        # With no call in between: the reply is either posted or kept, never lost or both.
        del handle.posted[seq]
        self._arrived += (arrival,)

    def _lose_posted(self, handle: WorkerHandle) -> None:
        """A dead worker's posted commands: each answered by the worker's death."""
        for seq in list(handle.posted):
            self._keep(handle, seq, None, handle.lost())

    def _send_all(
        self,
        handles: Sequence[WorkerHandle],
        messages: Sequence[bytes],
        call: _Call,
        tags: Sequence[Any] | None = None,
    ) -> None:
        """Send each worker its message (numbered ``handle.seq``) through its pipe; with
        mailboxes, announce them and wake the workers first (they sleep on their futex word,
        and read a long message while it is written). With ``tags``, each is a posted
        command, kept with its tag just before it is sent (its reply may come at once).

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
            if tags is not None:
                handle.posted[handle.seq] = tags[index]
            self._send(handle, message, call)

    def _send(self, handle: WorkerHandle, message: bytes, call: _Call) -> None:
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

    def _make_room(self, handle: WorkerHandle, call: _Call) -> None:
        """Wait until ``handle``'s full pipe takes more of a command, reading every pipe
        meanwhile: the worker may be busy writing a long reply to an earlier command (one
        posted by send()), and reads no command before that reply is read. Keeps the reply
        bodies to ``call`` in ``call.early``; raises ``BrokenPipeError`` once ``handle`` is
        dead, or stopped at ``call``'s deadline."""
        while handle.dead is None:
            span = poller.SLICE
            if call.deadline is not None:
                span = min(span, call.deadline - time.monotonic())
                if span <= 0:
                    self._time_out([handle], call.name, call.timeout)
                    break
            room, ready = self._poller.wait_room(handle, span)
            for other, is_sentinel in ready:
                body = self._read(other, is_sentinel)
                if body is not None:
                    call.early[other.index] = body
            if room and handle.dead is None:
                return
        raise BrokenPipeError(f"worker {handle.index} is dead")

    def _collect(self, handles: Sequence[WorkerHandle], call: _Call, *, kill: bool) -> list[Any]:
        """Wait for the reply bodies of ``handles`` to ``call`` (None: the worker died or, at
        its deadline, did not answer and was stopped if ``kill``), those read while sending
        included."""
        replies: dict[int, Any] = dict(call.early)
        pending = {h.index for h in handles if h.dead is None} - replies.keys()
        deadline, timeout, name = call.deadline, call.timeout, call.name
        while pending:
            remaining = None if deadline is None else deadline - time.monotonic()
            ready = self._pending(self.workers) or self._poller.wait(remaining)
            if not ready and remaining is not None and remaining <= 0:
                if kill:
                    self._time_out([self.workers[i] for i in sorted(pending)], name, timeout)
                break
            for handle, is_sentinel in ready:
                body = self._read(handle, is_sentinel)
                if body is not None and handle.index in pending:
                    replies[handle.index] = body
                if handle.index in pending and (body is not None or handle.dead is not None):
                    pending.discard(handle.index)
        return [replies.get(h.index) for h in handles]

    def _collect_mail(
        self, handles: Sequence[WorkerHandle], timeout: float | None, name: str
    ) -> list[Any]:
        """``_collect`` for commands put in the mailboxes: wait for their replies there (or
        in the pipe, for those too long for a box)."""
        mail = self.mail
        assert mail is not None
        bodies: dict[int, Any] = {}
        pending = [h for h in handles if h.dead is None]
        everyone = [h.index for h in pending]
        in_pipe: list[WorkerHandle] = []
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        look = start + _MAIL_SLICE  # when to look at the pipes and sentinels next
        flowing = self._flowing(pending)
        while True:
            answer = mail.answer()  # before the replies: one written after changes it
            indices = everyone if len(pending) == len(handles) else [h.index for h in pending]
            # After the seq, as from the pipe.
            found = mail.replies(indices, [h.seq for h in pending], 8)
            waiting = []
            for handle, body in zip(pending, found):
                if body is None:
                    waiting.append(handle)
                elif type(body) is int:  # mail.IN_PIPE
                    in_pipe.append(handle)
                else:
                    bodies[handle.index] = body
            pending = waiting
            if not pending:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self._time_out(pending, name, timeout)
                break
            if flowing or now >= look:
                # A dead worker never answers, and a worker writing an earlier (stale) reply
                # longer than its pipe holds waits for it to be read before it reads its
                # mailbox: read the pipes, closely while something flows through them.
                span = _DRAIN if flowing else 0.0
                if deadline is not None:
                    span = min(span, max(0.0, deadline - now))
                ready = self._pending(self.workers) or self._poller.wait(span)
                flowing = any(not is_sentinel for _, is_sentinel in ready)
                for handle, is_sentinel in ready:
                    body = self._read(handle, is_sentinel)
                    if body is not None:  # a reply too long for its box, already read
                        bodies[handle.index] = body
                pending = [h for h in pending if h.dead is None and h.index not in bodies]
                # A worker that should have woken them may have died: wake directly those that
                # did not take their command yet.
                late = mail.untaken([h.index for h in pending])
                if late:
                    mail.ring(late)
                flowing = flowing or self._flowing(pending)
                look = time.monotonic() + _MAIL_SLICE
                continue
            # Any wake-up (a signal's included) comes back here: the look above still comes
            # every _MAIL_SLICE.
            mail.sleep(answer, look if deadline is None else min(look, deadline))
        in_pipe = [h for h in in_pipe if h.index not in bodies]
        if in_pipe:
            call = _Call(timeout, name, start)  # the same deadline
            for handle, body in zip(in_pipe, self._collect(in_pipe, call, kill=True)):
                if body is not None:
                    bodies[handle.index] = body
        return [bodies.get(h.index) for h in handles]

    def _flowing(self, handles: Sequence[WorkerHandle]) -> bool:
        """Whether a reply is still due through the pipe of one of ``handles`` (to a command
        sent through it, e.g. by ``send()`` before a ``reset()``), or half read.

        Once no worker's is, none is until something is written to a pipe or read from one
        (``_quiet``): the mailboxes' calls do neither, and skip the look at every worker.
        """
        if self._quiet:
            return False
        if not any(h.heard < h.piped or h.channel.pending for h in self.workers):
            self._quiet = True
            return False
        return any(h.heard < h.piped or h.channel.pending for h in handles)

    @staticmethod
    def _pending(handles: Sequence[WorkerHandle]) -> list[tuple[WorkerHandle, bool]]:
        """The live ``handles`` whose channel already holds (part of) a reply that Ctrl-C left
        there, as ready pipes: their pipe may be empty, so polling would wait for it forever."""
        return [(h, False) for h in handles if h.dead is None and h.channel.pending]

    def _read(self, handle: WorkerHandle, is_sentinel: bool) -> Any:
        """Read the ready messages of ``handle``: its current reply's body, or None (stale
        replies, posted replies, which are kept for recv(), or the worker died)."""
        if handle.dead is not None:
            return None
        self._quiet = False  # an interrupt may leave part of a reply in its channel
        conn = handle.conn
        if is_sentinel and not handle.channel.pending and not conn.poll(0):
            self._bury(handle, "EOFError", DIED, handle.ending())
            return None
        try:
            # Messages an interrupt left in the channel first: reading now could wait for more.
            messages = handle.channel.messages or handle.channel.read()
        except (EOFError, OSError) as exc:
            torn = isinstance(exc, frames.TornStream)
            self._bury(handle, "EOFError", LOST if torn else DIED, "" if torn else handle.ending())
            return None
        except BaseException:  # Ctrl-C
            if handle.channel.torn:  # it took bytes of a reply with it: stop now, not hang later
                self._bury(handle, "EOFError", LOST)
            raise
        body = None
        while messages:  # each removed once handled: an interrupt leaves the rest there
            data = messages[0]
            seq = int.from_bytes(data[:8], "little", signed=True)
            handle.heard = max(handle.heard, seq)
            if seq in handle.posted:
                self._keep(handle, seq, (handle, memoryview(data)[8:]), None)
            elif seq == handle.seq:
                body = memoryview(data)[8:]
            # else: the reply of an interrupted call, or one read twice (see frames)
            del messages[0]
        return body

    def _time_out(self, handles: Sequence[WorkerHandle], what: str, timeout: Any) -> None:
        """Stop ``handles``, which did not answer ``what`` within ``timeout`` seconds."""
        for handle in handles:
            answer = f"did not answer {what}() within {timeout:g} s and was stopped"
            self._bury(handle, "TimeoutError", f"worker {handle.index} {answer}")

    def _bury(self, handle: WorkerHandle, exc_type: str, message: str, note: str = "") -> None:
        """Mark ``handle`` dead (every later call needing it raises) and make sure it is."""
        if handle.dead is None:
            handle.dead = handle.failure(exc_type, message, _DEAD_CLASSES.get(exc_type), note)
            self._poller.remove(handle)
            self._lose_posted(handle)
        with contextlib.suppress(Exception):
            if handle.process.is_alive():
                handle.process.kill()

    # -- stopping ----------------------------------------------------------------------------

    def stop(self, timeout: float | None) -> list[tuple[int, VecEnvWorkerError]]:
        """Close the sub-envs and stop every worker; their close errors by sub-env.

        Waits ``timeout`` seconds in all (None: as long as they take) for the workers to close
        their sub-envs and exit, then terminates the remaining ones (and tells their watchdogs
        the parent is gone), then kills those that ignore it. Always releases every process and
        pipe, even when interrupted: then after a short grace, not the whole ``timeout``.
        """
        errors: list[tuple[int, VecEnvWorkerError]] = []
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        try:
            live = [h for h in self.workers if h.dead is None]
            close = dumps(None)
            messages = [protocol.head(h.seq + 1, protocol.CLOSE) + close for h in live]
            for handle in live:
                handle.seq += 1
            call = _Call(timeout, "close")
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

    def _force(self, deadline: float) -> None:
        try:
            processes.end([h.process for h in self.workers], self._lifeline, deadline)
        finally:
            for handle in self.workers:
                self._poller.remove(handle)
                handle.conn.close()
                if handle.dead is None:
                    handle.dead = handle.failure("EOFError", DIED)
                with contextlib.suppress(ValueError):  # still running after all: leave it be
                    handle.process.close()
            if self._lifeline is not None:
                self._lifeline.close()
                self._lifeline = None
            if self.mail is not None:
                self.mail.release(owner=True)
                self.mail = None
