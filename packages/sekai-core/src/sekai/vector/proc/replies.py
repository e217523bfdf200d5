"""Waiting for the workers' replies and reading them: the parent's receiving side of a Pool.

Replies carry the command's sequence number, so a reply left unread by an interrupted call is
dropped. Waiting always watches each worker's process sentinel as well as its pipe (a wait on
the mailboxes looks at them every 50 ms), so a dead worker is noticed (never waited on
forever), and an optional timeout stops a worker that does not answer.

Replies to posted commands (``send()``) are kept as they arrive, also while a call waits for
its own, undecoded, until ``recv()`` has taken them (``Replies`` is its ``Inbox``): a reply
whose unpickling Ctrl-C interrupts is unpickled again by the next one.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from sekai.vector._batches import Arrival
from sekai.vector._interrupts import interruptible
from sekai.vector._remote import Reply
from sekai.vector.proc import frames, poller
from sekai.vector.proc.handle import DIED, LOST, WorkerHandle
from sekai.vector.proc.mail import Mail
from sekai.vector.proc.poller import Poller

__all__ = ["Call", "Replies"]

# A dead worker's error is a plain VecEnvWorkerError, except a timeout's: `except TimeoutError`.
_DEAD_CLASSES: dict[str, type] = {"TimeoutError": TimeoutError}
# Seconds between checks for dead workers while the parent sleeps on its futex word (a dead
# worker never wakes it).
_MAIL_SLICE = 0.05
# Seconds the parent waits for more of a reply flowing through a pipe while it waits on its
# mailboxes (such a reply is stale; its worker reads its mailbox once it has written it all).
_DRAIN = 0.002


class Call:
    """A call waiting for replies: when it times out, and the replies read while sending."""

    __slots__ = ("deadline", "early", "name", "timeout")

    def __init__(self, timeout: float | None, name: str, start: float | None = None) -> None:
        self.timeout = timeout
        self.name = name  # the command, for the timeout's error
        begin = time.monotonic() if start is None else start  # ``time.monotonic()``
        self.deadline = None if timeout is None else begin + timeout
        self.early: dict[int, Any] = {}  # worker -> reply body


class Replies:
    """The workers of a Pool as the parent waits for their replies and reads them."""

    def __init__(self) -> None:
        self.workers: list[WorkerHandle] = []
        self.mail: Mail | None = None
        self._poller = Poller()
        self._quiet = False  # no reply is due through a pipe or half read (``_flowing``)
        # Replies to posted commands, (worker, reply bytes) until recv() decodes them.
        self._arrived: deque[Arrival] = deque()

    # -- the inbox of recv() (``sekai.vector._batches.Inbox``) --------------------------------

    def forget_posted(self) -> None:
        """Drop every posted command's reply, arrived or not (those to come are dropped)."""
        self._arrived.clear()
        for handle in self.workers:
            handle.posted.clear()

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

    # -- waiting for replies -------------------------------------------------------------------

    def _make_room(self, handle: WorkerHandle, call: Call) -> None:
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
            with interruptible():  # a hung worker's full pipe: Ctrl-C ends send()'s wait
                room, ready = self._poller.wait_room(handle, span)
            for other, is_sentinel in ready:
                body = self._read(other, is_sentinel)
                if body is not None:
                    call.early[other.index] = body
            if room and handle.dead is None:
                return
        raise BrokenPipeError(f"worker {handle.index} is dead")

    def _collect(self, handles: Sequence[WorkerHandle], call: Call, *, kill: bool) -> list[Any]:
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
            call = Call(timeout, name, start)  # the same deadline
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
