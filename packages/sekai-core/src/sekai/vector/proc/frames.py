"""Messages on a worker's pipe, read and written with as few system calls as possible.

The framing is ``multiprocessing.Connection``'s: a 4-byte big-endian signed length (or -1 and
an 8-byte length for a message of 2 GiB or more), then the message. ``Connection.recv_bytes``
reads the length and the message with two reads, through several layers of Python, on every
message; a parent talking to 16 workers pays that 16 times a step. A ``Channel`` reads whatever
the pipe holds with one read, which is usually one whole reply (a worker writes a reply of up
to 16 KiB with one write), and writes a message with one write.

A read never waits for the rest of a long message: it keeps what arrived and the next read
continues it, so a call waiting for a reply can be interrupted (Ctrl-C) between reads without
losing anything. Complete messages wait in ``messages`` until their reader removes them.

The parent's ends are non-blocking (its pool makes them so): a write that finds the pipe full
calls ``make_room``, which reads every worker's pipe meanwhile, since the worker may itself be
busy writing a long reply that nobody would read otherwise; a read that finds nothing returns
nothing. The workers' ends block. (On Windows a write still waits.)

Where a pipe end is not a file descriptor (Windows), ``channel`` wraps the ``Connection``'s
own methods instead, with the same interface.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Protocol

from sekai.vector._interrupts import holding_interrupts

if sys.platform != "win32":
    import fcntl
    import termios

__all__ = ["Channel", "FdChannel", "Message", "TornStream", "channel"]

Message = bytes | memoryview

_CHUNK = 1 << 16  # bytes asked of one read (a pipe holds 64 KiB on Linux)
_SMALL = 16384  # Connection's size below which the length and the message go in one write
_LONG = 0x7FFFFFFF  # longer messages carry -1 and an 8-byte length
_UNHELD = contextlib.nullcontext()
# From 3.10 on, Python raises a pending KeyboardInterrupt only when a function starts, after a
# call returns and at backward jumps: never between an attribute store and the call after it.


class TornStream(EOFError):
    """An interrupted read took bytes from the pipe that were lost: the rest cannot be read in
    step with the writer any more."""


class Channel(Protocol):
    """One end of a worker's pipe."""

    @property
    def messages(self) -> list[Message]:
        """The complete messages read and not removed by the reader yet, in order."""
        ...

    @property
    def torn(self) -> bool:
        """Whether a read was interrupted after it took bytes it could not keep."""
        ...

    @property
    def pending(self) -> bool:
        """Whether the channel itself holds what the next ``read`` returns or continues without
        waiting for the pipe: kept messages, or the bytes of a read Ctrl-C interrupted (the
        pipe may be empty then, so polling it would wait for a reply already here)."""
        ...

    def read(self) -> list[Message]:
        """Read what the pipe holds (waiting only while it holds nothing) and return
        ``messages``, with the messages this completed (maybe none) at the end."""
        ...

    @property
    def cut(self) -> bool:
        """Whether a write was cut short after part of its frame went into the pipe (the pipe
        is out of step: its reader would take what follows as the rest)."""
        ...

    def write(self, message: bytes, make_room: Callable[[], None] | None = None) -> None:
        """Send ``message`` whole. On a non-blocking end, call ``make_room`` whenever the pipe
        is full (it returns once the pipe may take more bytes, or raises to give up)."""
        ...


def channel(conn: Connection) -> Channel:
    """The channel of ``conn`` (which stays the owner of the pipe end: close it, not this)."""
    if sys.platform == "win32":  # pragma: no cover - a PipeConnection holds a handle, not an fd
        return _ConnectionChannel(conn)
    return FdChannel(conn.fileno())


def _frame_sizes(data: bytes | bytearray | memoryview) -> tuple[int, int]:
    """``(header, header + message)`` bytes of the frame ``data`` starts with, as far as its
    first bytes tell: ``(4, 4)`` before the length is there, ``(12, 12)`` before a long one is."""
    if len(data) < 4:
        return 4, 4
    size = int.from_bytes(data[:4], "big", signed=True)
    if size != -1:
        return 4, 4 + size
    if len(data) < 12:
        return 12, 12
    return 12, 12 + int.from_bytes(data[4:12], "big")


def _available(fd: int) -> int:
    """The bytes the pipe holds (they can be read without waiting)."""
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, bytes(4)), sys.byteorder)


class FdChannel:
    """A pipe end read and written directly through its file descriptor.

    ``read`` returns only whole messages; the start of a message that is not there whole is
    kept (``_frame``) and completed by later reads. When Ctrl-C interrupts a read after it took
    bytes from the pipe and before they were kept, those bytes are found again where possible:

    - a read that continues a message first asks how many bytes the pipe holds and reads
      exactly those (at most the rest of the message) straight into the message's buffer,
      recording beforehand where they will land; so the next read knows what arrived;
    - the first read of a message cannot know how much it will take: its bytes are kept
      (``_data``) as soon as it returns, before they are parsed, with Ctrl-C held from the
      read to there (``holding_interrupts``) on a non-blocking end (the parent's), whose read
      never waits. Where Ctrl-C cannot be held (a blocking end, a thread other than the main
      one, a SIGINT handler of the user's) and strikes before they are kept, they are lost:
      the channel is ``torn`` and every later read raises ``TornStream`` (the reader stops
      the worker) instead of reading the rest of the pipe out of step.

    The end's blocking mode is read once, when the channel is made.
    """

    __slots__ = ("_data", "_fd", "_frame", "_holds", "_torn", "cut", "messages")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._holds = not os.get_blocking(fd)  # whether a read may hold Ctrl-C: it never waits
        self.messages: list[Message] = []
        self._data: bytes | None = None  # what a first read took, until it is parsed
        # The message being received: (its frame's buffer, bytes in it, bytes a read under way
        # lands in it); one attribute, so that it changes in one store.
        self._frame: tuple[bytearray, int, int] | None = None
        self._torn = False
        self.cut = False

    @property
    def torn(self) -> bool:
        return self._torn

    @property
    def pending(self) -> bool:
        frame = self._frame
        return bool(self.messages) or self._data is not None or (frame is not None and frame[2] > 0)

    def read(self) -> list[Message]:
        """Read what the pipe holds (waiting only while it holds nothing) and return
        ``messages``, with the messages this completed (maybe none) at the end.

        Raises:
            EOFError: the other end is closed (mid-message included).
            TornStream: an earlier read lost bytes it took from the pipe.
        """
        if self._torn:
            raise TornStream("a read of this pipe was interrupted after taking bytes it lost")
        if self._data is not None:  # an interrupted read's bytes, not parsed yet
            self._parse(self._data)
        elif self._frame is None:
            self._read_first()
        else:
            self._read_more(*self._frame)
        return self.messages

    def _read_first(self) -> None:
        # Ctrl-C held until the bytes are kept, where the read cannot wait (else not at all).
        with holding_interrupts() if self._holds else _UNHELD:
            self._torn = True  # until the bytes this read takes are kept
            try:
                data = os.read(self._fd, _CHUNK)
            except BlockingIOError:  # a non-blocking end with nothing to read yet
                self._torn = False
                return
            self._data = data
            self._torn = False
        if not data:
            self._data = None
            raise EOFError("the pipe was closed")
        if len(data) >= 4 and int.from_bytes(data[:4], "big", signed=True) == len(data) - 4:
            message = memoryview(data)[4:]  # the usual case: exactly one message, not copied
            self.messages += (message,)
            self._data = None
            return
        self._parse(data)

    def _parse(self, data: bytes) -> None:
        """Keep the messages in ``data`` and the start of the one it ends inside."""
        found, frame = _split(data)  # allocates the rest of a long message: may take a while
        # Kept with no call in between (an interrupt before _data is cleared repeats them at
        # most, and readers drop a reply seen twice).
        self.messages += found
        self._frame = frame
        self._data = None

    def _read_more(self, buffer: bytearray, filled: int, landing: int) -> None:
        if landing:  # the last read was interrupted after it started: its bytes are in buffer
            filled += landing
        else:
            count = min(_available(self._fd), len(buffer) - filled)
            if count:
                view = memoryview(buffer)[filled : filled + count]
                self._frame = (buffer, filled, count)  # where the read below lands
                filled += os.readv(self._fd, [view])  # count bytes: the pipe holds them
            else:  # nothing there yet (a worker waits for the rest) or the writer closed
                self._torn = True
                try:
                    data = os.read(self._fd, len(buffer) - filled)
                except BlockingIOError:  # a non-blocking end with nothing more yet
                    self._torn = False
                    return
                if not data:
                    self._torn = False
                    raise EOFError("the pipe was closed in the middle of a message")
                buffer[filled : filled + len(data)] = data
                self._frame = (buffer, filled + len(data), 0)
                self._torn = False
                filled += len(data)
        if filled < len(buffer):
            self._frame = (buffer, filled, 0)
            return
        head, total = _frame_sizes(buffer)
        if len(buffer) < total:  # the header is complete: room for the rest of the frame
            grown = bytearray(total)
            grown[:filled] = buffer
            self._frame = (grown, filled, 0)
            return
        message = memoryview(buffer)[head:]
        self.messages += (message,)  # kept before the frame is forgotten: as in _parse
        self._frame = None

    def write(self, message: bytes, make_room: Callable[[], None] | None = None) -> None:
        size = len(message)
        if size > _LONG:
            header = (-1).to_bytes(4, "big", signed=True) + size.to_bytes(8, "big")
        else:
            header = size.to_bytes(4, "big", signed=True)
        if size <= _SMALL:
            self._write_all(header + message, make_room)
        else:  # not worth a copy: the length, then the message
            self._write_all(header, make_room)
            self.cut = True  # the length is in the pipe: the message must follow
            self._write_all(message, make_room)
        self.cut = False

    def _write_all(self, data: bytes, make_room: Callable[[], None] | None) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:  # the pipe is full (a non-blocking end)
                if make_room is None:
                    raise
                make_room()
                continue
            view = view[written:]
            if view:
                self.cut = True


def _split(data: bytes) -> tuple[list[Message], tuple[bytearray, int, int] | None]:
    """The complete messages ``data`` holds (not copied) and the frame of the incomplete one
    at its end, if any, as ``FdChannel._frame``."""
    messages: list[Message] = []
    view = memoryview(data)
    start = 0
    while start < len(data):
        head, total = _frame_sizes(view[start : start + 12])
        if start + total > len(data):  # the message, or even its header, is not all there
            buffer = bytearray(total)
            buffer[: len(data) - start] = view[start:]
            return messages, (buffer, len(data) - start, 0)
        messages.append(view[start + head : start + total])
        start += total
    return messages, None


class _ConnectionChannel:  # pragma: no cover - Windows
    __slots__ = ("_conn", "messages")

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self.messages: list[Message] = []

    @property
    def torn(self) -> bool:
        return False  # Connection reads with its own calls: an interrupted one goes unseen

    @property
    def cut(self) -> bool:
        return False  # the same for its writes

    @property
    def pending(self) -> bool:
        return bool(self.messages)

    def read(self) -> list[Message]:
        message = self._conn.recv_bytes()
        self.messages += (message,)
        return self.messages

    def write(self, message: bytes, make_room: Callable[[], None] | None = None) -> None:
        self._conn.send_bytes(message)
