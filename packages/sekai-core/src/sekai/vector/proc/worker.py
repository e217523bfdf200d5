"""The ProcVecEnv worker process: runs a slice of the sub-envs, each through a ``SubEnv``.

Autoreset, freezing and attribute access are ``SubEnv``'s (the same code SyncVecEnv runs);
this module only receives commands (from its pipe, or from its mailbox where it has one),
runs them on every sub-env of the slice or on those the command names (``run_each``: a
failing sub-env does not stop the others), writes observations into shared memory and sends
the reply the way the command came.
A watchdog thread ends the process when the parent dies.
"""

from __future__ import annotations

import math
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import sekai.wrappers.autoreset  # noqa: F401 - SubEnv needs it: forked workers inherit it
from sekai.vector._contract.actions import ActionChecker
from sekai.vector._contract.errors import describe, unreadable_command
from sekai.vector._contract.subenv import CheckedSubEnv, run_each
from sekai.vector._remote import (
    Errors,
    build_slice,
    encode_reply,
    run_call,
    run_get,
    run_set,
    run_step,
    step_entries,
)
from sekai.vector.proc import frames, protocol
from sekai.vector.proc.mail import Mail
from sekai.vector.proc.shm import SharedBatch, Writer, row_writer, write_at, write_rows

__all__ = ["run"]

OWNER = "ProcVecEnv"
_WATCH_INTERVAL = 1.0  # seconds between checks of the parent's pid (fork only)
# Seconds a worker with a mailbox sleeps at most before looking at its pipe anyway (a closed
# pipe or a message whose announcement was cut short by an interrupt in the parent).
_SLEEP = 1.0
# Seconds between looks at the mailbox while an announced message is due through the pipe
# (short: a Ctrl-C in the parent between announcing and writing leaves one that never comes).
_PIPE_SLICE = 0.005

Command = tuple[int, int, Any, bool]  # seq, op, message, whether it came through the mailbox


def _watch_parent(lifeline: Connection, parent_pid: int, check_pid: bool) -> None:
    """Exit the process as soon as the parent is gone, even while env code is running.

    The parent holds the only write end of ``lifeline`` (workers started with fork close the
    copy they inherit), so reading it gives EOF once the parent died or gave up on us in
    ``close()``. With fork other children of the parent may hold a copy too, so the parent's
    pid is checked as well.
    """
    try:
        while not lifeline.poll(_WATCH_INTERVAL if check_pid else None):
            if os.getppid() != parent_pid:
                break
    except (EOFError, OSError):
        pass
    os._exit(1)


class Worker:
    """The sub-envs of one worker process and the handlers of the commands."""

    def __init__(self, conn: Connection, mail: Mail | None = None, index: int = 0) -> None:
        self.conn = conn
        self.mail = mail
        self.index = index
        self.last = 0  # the sequence number of the last command handled
        self._poll = select.poll() if mail is not None else None
        if self._poll is not None:
            self._poll.register(conn.fileno(), select.POLLIN)
        self.subs: list[CheckedSubEnv] = []
        self.first = 0
        self.shared: SharedBatch | None = None
        self.rows: Any = None
        self.flags: Any = None
        self.write: Writer | None = None
        self.split: Callable[[Any], list[Any]] = list
        self.action_space: Any = None
        self.handlers: dict[int, Callable[[Any], tuple[Any, Errors]]] = {
            protocol.INIT: self.init,
            protocol.ATTACH: self.attach,
            protocol.RESET: self.reset,
            protocol.STEP: self.step,
            protocol.GET: self.get_attr,
            protocol.SET: self.set_attr,
            protocol.CALL: self.call,
            protocol.CLOSE: self.close,
        }

    # -- the loop ----------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer commands until CLOSE or until the parent's end of the pipe closes."""
        pipe = frames.channel(self.conn)
        while True:
            try:
                commands = self._next(pipe)
            except (EOFError, OSError):
                return
            for seq, op, message, mailed in commands:
                reply = self.encode(seq, op, *self.answer(op, message))
                if mailed:
                    assert self.mail is not None
                    fits = len(reply) <= self.mail.capacity
                    self.mail.send(self.index, seq, reply if fits else None)
                    if not fits:
                        pipe.write(reply)
                else:
                    pipe.write(reply)
                self.last = seq
                if op == protocol.CLOSE:
                    return

    def _next(self, pipe: frames.Channel) -> list[Command]:
        """The next commands, in order (waiting for one)."""
        mail = self.mail
        if mail is None:
            return self._drain(pipe.read(), False)
        while True:
            bell = mail.bell()  # before looking: a ring after it wakes the wait below at once
            commands: list[Command] = []
            while True:
                # The mailbox first: a command there was put after every earlier one written
                # to the pipe, so the pipe read after it holds those whole. A command the pipe
                # gave may follow one put in the mailbox meanwhile (by a call Ctrl-C cut
                # short): look there again until the pipe gives nothing more.
                taken = mail.take(self.index)
                if taken is not None:
                    mail.relay(self.index)
                    commands += self._drain([taken[1]], True)
                drained = False
                while pipe.pending or self._readable(0):
                    commands += self._drain(pipe.read(), False)
                    drained = True
                if not drained:
                    break
            if commands:
                commands.sort(key=lambda command: command[0])
                return commands
            if mail.announced(self.index) > self.last:  # on its way through the pipe
                self._readable(_PIPE_SLICE)
            else:
                mail.wait(self.index, bell, time.monotonic() + _SLEEP)

    def _readable(self, timeout: float) -> bool:
        assert self._poll is not None
        return bool(self._poll.poll(math.ceil(timeout * 1000)))

    @staticmethod
    def _drain(messages: list[Any], mailed: bool) -> list[Command]:
        """The commands ``messages`` hold, emptying the list (a channel's own)."""
        commands = [(*protocol.read_head(message), message, mailed) for message in messages]
        messages.clear()
        return commands

    def answer(self, op: int, message: Any) -> tuple[Any, Errors]:
        """The entries and errors of the command ``message``."""
        try:
            argument = protocol.argument(message, (self.first, len(self.subs)))
        except Exception as exc:  # e.g. a class this process cannot import
            # Reported for the sub-envs it was for, read from the arguments with positions.
            payload = memoryview(message)[protocol.HEAD :]
            positioned = op in (protocol.STEP, protocol.GET, protocol.SET, protocol.CALL)
            count = len(self.subs)
            name = protocol.name(op)
            return None, unreadable_command(payload, exc, name, count, positioned=positioned)
        try:
            return self.handlers[op](argument)
        except Exception as exc:  # a command that cannot even start: all sub-envs fail
            return None, [(0, describe(exc))]

    def encode(self, seq: int, op: int, entries: Any, errors: Errors) -> bytes:
        """The reply: ``seq`` (8 bytes, so the parent can drop a stale reply unread), then
        ``encode_reply``'s bytes."""
        head = seq.to_bytes(8, "little", signed=True)
        return head + encode_reply(protocol.name(op), entries, errors)

    # -- handlers ----------------------------------------------------------------------------

    def init(self, argument: tuple[bytes, bool, int]) -> tuple[Any, Errors]:
        """Build the sub-envs; reply with the spaces, metadata and AutoReset flags."""
        payload, autoreset, first = argument
        self.first = first
        subs, ready, errors = build_slice(payload, autoreset, first, OWNER)
        if subs is not None:
            self.subs = subs
            self.action_space = subs[0].env.action_space
            self.split = ActionChecker(self.action_space, len(subs)).split
        return ready, errors

    def attach(self, argument: tuple[str, Any, int]) -> tuple[Any, Errors]:
        """Map the parent's shared block and keep views of this worker's rows."""
        name, space, num_envs = argument
        self.shared = SharedBatch.attach(name, space, num_envs)
        self.write = row_writer(space)
        self.rows = self.shared.rows(self.first, self.first + len(self.subs))
        self.flags = self.shared.flags(self.first, self.first + len(self.subs))
        return None, []

    def _observe(self, observations: list[Any], entries: list[Any], errors: Errors) -> None:
        """Write the observations to shared memory, or append each to its entry."""
        if self.write is None:
            for index, observation in enumerate(observations):
                if entries[index] is not None:
                    entries[index] = (*entries[index], observation)
        elif not errors:  # after an error the parent raises: the observations are not read
            for index, exc in write_rows(self.write, self.rows, observations):
                entries[index] = None
                errors.append((index, describe(exc)))

    def reset(self, argument: tuple[Sequence[Any], Sequence[Any]]) -> tuple[Any, Errors]:
        """Reset every sub-env with its seed and options."""
        results, failures = run_each(
            lambda sub, plan: sub.reset(*plan), self.subs, list(zip(*argument))
        )
        errors = [(index, describe(exc)) for index, exc in failures]
        entries: list[Any] = [None if r is None else (r.info,) for r in results]
        self._observe([None if r is None else r.observation for r in results], entries, errors)
        return entries, errors

    def step(self, argument: tuple[list[int] | None, Any]) -> tuple[Any, Errors]:
        """Step some sub-envs (None: all) with their slice of the batch of actions; reply
        ``(infos, None)`` after writing the rest to shared memory, or ``(infos, (rewards,
        terminated, truncated, observations))`` without it (``infos`` and observations packed)."""
        shared = self.write is not None
        stepped, errors = run_step(self.subs, self.split, self.action_space, argument)
        positions = argument[0]
        if not shared:
            return step_entries(stepped, positions, errors, arrays=True), errors
        rows = slice(None) if positions is None else positions
        for view, values in zip(self.flags, stepped[:3]):
            view[rows] = values
        assert self.write is not None
        for row, exc in write_at(self.write, self.rows, positions, stepped.observations):
            stepped.infos[row] = None
            errors.append((row if positions is None else positions[row], describe(exc)))
        entries = step_entries(stepped, positions, errors, arrays=False)
        errors.sort(key=lambda item: item[0])
        return entries, errors

    def get_attr(self, argument: tuple[list[int] | None, str]) -> tuple[Any, Errors]:
        """Read an attribute from the sub-envs at some positions (None: all)."""
        return run_get(self.subs, argument)

    def set_attr(
        self, argument: tuple[list[int] | None, str, Sequence[Any], bool]
    ) -> tuple[Any, Errors]:
        """Set an attribute on the sub-envs at some positions (None: all), one value each (or
        only check the values: ``run_set``)."""
        return run_set(self.subs, argument)

    def call(
        self, argument: tuple[list[int] | None, str, tuple[Any, ...], dict[str, Any]]
    ) -> tuple[Any, Errors]:
        """Call a method of the sub-envs at some positions (None: all)."""
        return run_call(self.subs, argument)

    def close(self, argument: None) -> tuple[Any, Errors]:
        """Close every sub-env (the worker exits after replying)."""
        _, failures = run_each(lambda sub, _: sub.close(), self.subs, self.subs)
        return None, [(index, describe(exc)) for index, exc in failures]

    def release(self) -> None:
        """Unmap the shared block (the parent owns its name)."""
        self.rows = self.write = None
        if self.shared is not None:
            self.shared.release_attached()


def run(
    conn: Connection,
    lifeline: Connection,
    parent_pid: int,
    check_pid: bool,
    inherited: Sequence[Connection],
    mail: tuple[str, int, int] | None = None,
    index: int = 0,
) -> None:
    """The worker process's entry point.

    Args:
        conn: this worker's end of its command pipe.
        lifeline: the read end of the pipe whose write end only the parent holds.
        parent_pid: the parent's pid.
        check_pid: also watch the parent's pid (started with fork, whose children inherit
            the lifeline's write end).
        inherited: the parent's connections this process inherited (fork), closed at once so
            that only the parent holds them.
        mail: the mailbox block's ``(name, number of workers, capacity)``, or None.
        index: this worker's index (its mailbox).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if hasattr(signal, "pthread_sigmask"):  # held while it started (processes.holding_sigint)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one held is dropped
    for connection in inherited:
        connection.close()
    threading.Thread(
        target=_watch_parent, args=(lifeline, parent_pid, check_pid), daemon=True
    ).start()
    try:
        box = None if mail is None else Mail.attach(*mail)
    except FileNotFoundError:
        # The parent unlinks the name once every worker answered, or when it stops: it gave up
        # before this process started (Ctrl-C in ``process.start()``) and never waits for it.
        return
    worker = Worker(conn, box, index)
    try:
        worker.serve()
    finally:
        worker.release()
        if box is not None:
            box.release(owner=False)
