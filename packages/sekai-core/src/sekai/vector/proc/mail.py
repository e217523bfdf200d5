"""The mailboxes of a ProcVecEnv's workers: a shared-memory block through which a call that
needs every worker (``step()``, ``reset()``, ...) reaches them and comes back with few system
calls: the parent puts each worker's command in its inbox and wakes the first few with one futex
wake, each woken worker wakes a few more (a tree: the parent's wake-up costs the same for 4
workers or 64); each worker puts its reply in its outbox, and the last one to finish wakes the
parent.

Through pipes the same call costs the parent a write, a poll and a read per worker, and a
wake-up per reply: on a many-core machine the parent, not the workers, bounds the step.

The pipes stay for everything else: commands posted by ``send()`` (several may wait in a
worker), messages too long for a box (both sides say so and use the pipe instead), and all
commands while a worker has not taken the last one put in its inbox (after an interrupted
call). A worker handles commands in the order of their sequence numbers whichever way they
came. The block is made only where futexes are (``futex.AVAILABLE``), and only where /dev/shm
has room for it (``create_for``; else the pipes carry every call, with a warning).

A command every worker gets alike (a ``step()``'s whole batch of actions, each worker reading
its rows) is written once, in the common box, rather than once per inbox.

Layout (each part from the start of a cache line): the workers' futex word (the bell: the
parent adds one and wakes the workers concerned) and the common command's length (both
written by the parent only, before it wakes them), the parent's futex word
(the answer: a worker writes a value of its own), one line of int64 counters per worker, each
worker's inbox and outbox, then the common box.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Sequence

from sekai.vector.proc import futex
from sekai.vector.proc.shm import NoRoom, _attach, _Segment, create_segment, warn_no_room

__all__ = ["CAPACITY", "COMMON", "FANOUT", "IN_PIPE", "Mail"]

CAPACITY = 1 << 16  # bytes of each inbox and outbox at least (pages are used once written)
PER_ENV = 1 << 11  # and at least this many bytes per sub-env of a worker (its step's reply)
IN_PIPE = -1  # the length of a message sent through the pipe instead
COMMON = -2  # the length of a command that is in the common box (``put_common``)
FANOUT = 4  # the workers each wake-up of the parent's tree reaches (``ring``)
_LINE = 64
# The counters of a worker: the sequence number of the command in its inbox and its length
# (written by the parent), the last one it took out, the one whose reply is in its outbox and
# that reply's length (written by the worker), and the last command sent through its pipe
# (written by the parent before the message).
_COMMAND, _LENGTH, _TAKEN, _DONE, _REPLY, _PIPE = range(6)
_ROW = _LINE // 8  # int64 counters per worker (one cache line)
_ANSWER = _LINE // 4  # the index of the parent's word among the int32 words
_COMMON_LENGTH = 1  # the index of the common command's length among the int32 words
_WORD = 0x7FFFFFFF  # futex words stay non-negative int32


class Mail:
    """The mailbox block of ``num_workers`` workers (``create`` in the parent, ``attach`` in
    a worker)."""

    def __init__(self, segment: _Segment, num_workers: int, capacity: int) -> None:
        self._segment: _Segment | None = segment
        self.name = segment.name
        self.num_workers = num_workers
        self.capacity = capacity
        buf = segment.buf
        assert buf is not None
        # Plain memoryviews, not NumPy arrays: reading or writing one number costs a fifth.
        self._words = buf[: 2 * _LINE].cast("i")
        self._bell = futex.address(buf, 0)
        self._answer = futex.address(buf, _LINE)
        self._counters = buf[2 * _LINE : 2 * _LINE + num_workers * _LINE].cast("q")
        start = 2 * _LINE + num_workers * _LINE
        self._boxes = buf[start : start + 2 * num_workers * capacity]
        # The command every worker gets alike (put_common), after the boxes.
        start += 2 * num_workers * capacity
        self._common = buf[start : start + capacity]
        # Each worker's inbox and outbox, views cut once.
        self._in = [self._box(index, False) for index in range(num_workers)]
        self._out = [self._box(index, True) for index in range(num_workers)]
        self._unlinked = False
        # The workers that wake others (``relay``): 0 to ``relaying - 1``.
        self.relaying = max(0, -(-num_workers // FANOUT) - 1)
        # The bits ring() wakes (0), then those each worker relays to (index + 1).
        self._relays = [0] * (num_workers + 1)
        for node in range(num_workers + 1):
            for index in range(FANOUT * node, min(FANOUT * (node + 1), num_workers)):
                self._relays[node] |= self.bit(index)

    @staticmethod
    def size(num_workers: int, capacity: int) -> int:
        """Bytes of the block."""
        return 2 * _LINE + num_workers * (_LINE + 2 * capacity) + capacity

    @staticmethod
    def capacity_for(envs_per_worker: int) -> int:
        """The box size for workers of up to ``envs_per_worker`` sub-envs (whole pages)."""
        size = max(CAPACITY, PER_ENV * envs_per_worker)
        return -(-size // 4096) * 4096

    @classmethod
    def create(cls, num_workers: int, capacity: int = CAPACITY) -> Mail:
        """A new block (parent side), named after this process so leaks are attributable.

        Raises:
            NoRoom: it does not fit in /dev/shm.
        """
        name = f"sekai_{os.getpid()}_mail_{secrets.token_hex(4)}"
        what = f"the mailboxes of {num_workers} worker processes"
        segment = create_segment(name, cls.size(num_workers, capacity), what)
        return cls(segment, num_workers, capacity)

    @classmethod
    def create_for(cls, slices: Sequence[tuple[int, int]]) -> Mail | None:
        """The block of workers running ``slices`` of the sub-envs (``create``), or None where
        it does not fit in /dev/shm: warned (``SharedMemoryWarning``), and every call goes
        through the pipes."""
        widest = max(hi - lo for lo, hi in slices)
        try:
            return cls.create(len(slices), cls.capacity_for(widest))
        except NoRoom as exc:
            instead = "every call goes through the pipes instead (slower with many workers)"
            warn_no_room(exc, instead, "use fewer sub-envs or workers")
            return None

    @classmethod
    def attach(cls, name: str, num_workers: int, capacity: int) -> Mail:
        """The block created by the parent (worker side)."""
        return cls(_attach(name), num_workers, capacity)

    def _box(self, index: int, out: bool) -> memoryview:
        start = (2 * index + out) * self.capacity
        return self._boxes[start : start + self.capacity]

    # -- the parent's side -------------------------------------------------------------------

    def free(self) -> bool:
        """Whether every worker took its last command out of its inbox."""
        counters = self._counters
        return all(
            counters[base + _TAKEN] == counters[base + _COMMAND]
            for base in range(0, len(counters), _ROW)
        )

    def put(self, index: int, seq: int, message: bytes) -> None:
        """Put command ``seq`` (at most ``capacity`` bytes) in the inbox of a worker that took
        the last one (``free``); ``ring`` tells the workers."""
        size = len(message)
        self._in[index][:size] = message
        base = index * _ROW
        self._counters[base + _LENGTH] = size
        # Last: x86-64 shows stores in order, so a worker that sees it sees the bytes.
        self._counters[base + _COMMAND] = seq

    def put_all(self, seqs: Sequence[int], messages: Sequence[bytes]) -> None:
        """``put`` command ``seqs[i]`` in the inbox of worker ``i``, for every worker."""
        inboxes, counters = self._in, self._counters
        base = 0
        for inbox, seq, message in zip(inboxes, seqs, messages):
            size = len(message)
            inbox[:size] = message
            counters[base + _LENGTH] = size
            counters[base + _COMMAND] = seq  # last, as in put()
            base += _ROW

    def put_common(self, seqs: Sequence[int], message: bytes) -> None:
        """Put one command (at most ``capacity`` bytes) for every worker, numbered ``seqs[i]``
        for worker ``i``, in the common box: written once, whatever the number of workers
        (every worker took its last command, ``free``, so none is still copying the box)."""
        size = len(message)
        self._common[:size] = message
        self._words[_COMMON_LENGTH] = size
        counters = self._counters
        base = 0
        for seq in seqs:
            counters[base + _LENGTH] = COMMON
            counters[base + _COMMAND] = seq  # last, as in put()
            base += _ROW

    def idle(self, index: int) -> bool:
        """Whether worker ``index`` replied to the last command put in its inbox."""
        base = index * _ROW
        return self._counters[base + _DONE] == self._counters[base + _COMMAND]

    def untaken(self, indices: Iterable[int]) -> int:
        """The bits (``bit``) of the workers ``indices`` that did not take the command in
        their inbox yet (0: none)."""
        counters, bits = self._counters, 0
        for index in indices:
            base = index * _ROW
            if counters[base + _TAKEN] != counters[base + _COMMAND]:
                bits |= self.bit(index)
        return bits

    def announce(self, index: int, seq: int) -> None:
        """Tell worker ``index`` that command ``seq`` comes through its pipe (before writing
        it, then ``ring``): it reads the pipe instead of sleeping."""
        self._counters[index * _ROW + _PIPE] = seq

    def ring(self, bits: int | None = None) -> None:
        """Wake the workers whose bits meet ``bits`` (``bit``; ``futex.ALL``: every worker) to
        read their inbox and pipe; None: every worker, in a tree (the parent wakes the first
        ``FANOUT``, each of them the next ones, ``relay``), so the parent's wake-up costs the
        same for any number, provided workers ``0`` to ``relaying - 1`` are idle."""
        self._words[0] = (self._words[0] + 1) & _WORD
        futex.wake(self._bell, self._relays[0] if bits is None else bits)

    def relay(self, index: int) -> None:
        """Pass the parent's wake-up on (worker ``index``, when it took a command from its
        inbox): to workers ``FANOUT * (index + 1)`` on, ``FANOUT`` of them. A worker that is
        not asleep just looks in its inbox when it next would sleep."""
        bits = self._relays[index + 1]
        if bits:
            futex.wake(self._bell, bits)

    @staticmethod
    def bit(index: int) -> int:
        """The bit of worker ``index`` in the bitsets of ``ring``."""
        return 1 << (index % 32)

    def answer(self) -> int:
        """The parent's futex word now (read it before looking at the replies, then ``sleep``
        on it: a reply written in between changes it)."""
        return self._words[_ANSWER]

    def replies(
        self, indices: Iterable[int], seqs: Iterable[int], start: int = 0
    ) -> list[bytes | int | None]:
        """The replies of workers ``indices`` to their commands ``seqs``: a copy of each
        reply's bytes from ``start`` on (a view into the outbox would pin the block), or
        ``IN_PIPE``, or None where the worker has not replied yet."""
        counters, out = self._counters, self._out
        found: list[bytes | int | None] = []
        for index, seq in zip(indices, seqs):
            base = index * _ROW
            if counters[base + _DONE] != seq:
                found.append(None)
                continue
            size = counters[base + _REPLY]
            found.append(IN_PIPE if size == IN_PIPE else out[index][start:size].tobytes())
        return found

    def sleep(self, answer: int, deadline: float) -> None:
        """Sleep until the last worker replies (``answer`` read before the replies were
        looked at), a signal, or ``deadline`` (``time.monotonic()``)."""
        futex.wait(self._answer, answer, futex.ALL, deadline)

    # -- a worker's side ---------------------------------------------------------------------

    def bell(self) -> int:
        """The workers' futex word now (read it before looking for commands, then ``wait``)."""
        return self._words[0]

    def wait(self, index: int, bell: int, deadline: float) -> None:
        """Sleep until the parent rings for worker ``index`` (``bell`` read before looking for
        commands), or ``deadline``."""
        futex.wait(self._bell, bell, self.bit(index), deadline)

    def announced(self, index: int) -> int:
        """The last command announced to worker ``index`` as coming through its pipe."""
        return self._counters[index * _ROW + _PIPE]

    def take(self, index: int) -> tuple[int, bytes] | None:
        """The command in worker ``index``'s inbox not taken yet: ``(seq, message)``."""
        counters, base = self._counters, index * _ROW
        seq = counters[base + _COMMAND]
        if seq == counters[base + _TAKEN]:
            return None
        length = counters[base + _LENGTH]
        if length == COMMON:  # numbered for this worker (the box's head holds no seq)
            body = self._common[8 : self._words[_COMMON_LENGTH]]
            message = seq.to_bytes(8, "little", signed=True) + body.tobytes()
        else:
            message = bytes(self._in[index][:length])
        counters[base + _TAKEN] = seq
        return seq, message

    def send(self, index: int, seq: int, reply: bytes | None) -> None:
        """Post worker ``index``'s reply to command ``seq`` (None: it goes through the pipe,
        which the caller writes next), and wake the parent if every worker has replied."""
        counters, base = self._counters, index * _ROW
        if reply is None:
            counters[base + _REPLY] = IN_PIPE
        else:
            self._out[index][: len(reply)] = reply
            counters[base + _REPLY] = len(reply)
        counters[base + _DONE] = seq
        # Without the fence two workers finishing together could each miss the other's reply
        # and neither would wake the parent.
        futex.fence()
        if all(
            counters[row + _DONE] == counters[row + _COMMAND]
            for row in range(0, len(counters), _ROW)
        ):
            # A value no other reply writes: the parent's word changes even if it read the
            # value an earlier reply wrote.
            self._words[_ANSWER] = (seq * self.num_workers + index) & _WORD
            futex.wake(self._answer)

    # -- releasing ---------------------------------------------------------------------------

    def unlink(self) -> None:
        """Remove the block's name (parent side, once every worker has it mapped)."""
        if not self._unlinked and self._segment is not None:
            with contextlib.suppress(FileNotFoundError):
                self._segment.unlink()
            self._unlinked = True  # only now: one that Ctrl-C cut short is done again

    def release(self, *, owner: bool) -> None:
        """Unmap the block; the ``owner`` (the parent) unlinks it first if still named."""
        if owner:
            self.unlink()
        segment, self._segment = self._segment, None
        for view in (*self._in, *self._out, self._boxes, self._common, self._words, self._counters):
            view.release()
        self._in = self._out = []
        if segment is not None:
            with contextlib.suppress(BufferError):  # a view still alive: unmapped when it dies
                segment.close()
