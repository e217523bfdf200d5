"""Messages on a worker's pipe, read and written with as few system calls as possible.

The framing is ``multiprocessing.Connection``'s: a 4-byte big-endian signed length (or -1 and
an 8-byte length for a message of 2 GiB or more), then the message. ``Connection.recv_bytes``
reads the length and the message with two reads, through several layers of Python, on every
message; a parent talking to 16 workers pays that 16 times a step. A ``Channel`` reads whatever
the pipe holds with one read, which is usually one whole reply (a worker writes a reply of up
to 16 KiB with one write), and writes a message with one write.

Where a pipe end is not a file descriptor (Windows), ``channel`` wraps the ``Connection``'s
own methods instead, with the same interface.
"""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection
from typing import Protocol

__all__ = ["Channel", "FdChannel", "Message", "channel"]

Message = bytes | memoryview

_CHUNK = 1 << 16  # bytes asked of one read (a pipe holds 64 KiB on Linux)
_SMALL = 16384  # Connection's size below which the length and the message go in one write
_LONG = 0x7FFFFFFF  # longer messages carry -1 and an 8-byte length


class Channel(Protocol):
    """One end of a worker's pipe."""

    def read(self) -> list[Message]:
        """The messages that have arrived, at least one (blocks until one has)."""
        ...

    def write(self, message: bytes) -> None:
        """Send ``message`` whole."""
        ...


def channel(conn: Connection) -> Channel:
    """The channel of ``conn`` (which stays the owner of the pipe end: close it, not this)."""
    if sys.platform == "win32":  # pragma: no cover - a PipeConnection holds a handle, not an fd
        return _ConnectionChannel(conn)
    return FdChannel(conn.fileno())


class FdChannel:
    """A pipe end read and written directly through its file descriptor.

    ``read`` returns only whole messages: when a read ends inside a message, it reads on until
    that message is complete (its writer has already sent it, or is sending it), so nothing is
    left buffered between calls and a ``poll`` of the descriptor still tells whether a message
    is waiting.
    """

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def read(self) -> list[Message]:
        """The messages that have arrived, at least one (blocks until one has).

        Raises:
            EOFError: the other end is closed (mid-message included).
        """
        data = os.read(self._fd, _CHUNK)
        if not data:
            raise EOFError("the pipe was closed")
        if len(data) >= 4 and int.from_bytes(data[:4], "big", signed=True) == len(data) - 4:
            return [memoryview(data)[4:]]  # the usual case: exactly one message, not copied
        return self._parse(bytearray(data))

    def _parse(self, buffer: bytearray) -> list[Message]:
        messages: list[Message] = []
        start = 0
        while True:
            self._fill(buffer, start + 4)
            size = int.from_bytes(buffer[start : start + 4], "big", signed=True)
            head = 4
            if size == -1:
                self._fill(buffer, start + 12)
                size = int.from_bytes(buffer[start + 4 : start + 12], "big")
                head = 12
            end = start + head + size
            self._fill(buffer, end)
            messages.append(bytes(memoryview(buffer)[start + head : end]))
            start = end
            if start == len(buffer):
                return messages

    def _fill(self, buffer: bytearray, size: int) -> None:
        """Read until ``buffer`` holds at least ``size`` bytes."""
        while len(buffer) < size:
            data = os.read(self._fd, max(_CHUNK, size - len(buffer)))
            if not data:
                raise EOFError("the pipe was closed in the middle of a message")
            buffer += data

    def write(self, message: bytes) -> None:
        size = len(message)
        if size > _LONG:
            header = (-1).to_bytes(4, "big", signed=True) + size.to_bytes(8, "big")
        else:
            header = size.to_bytes(4, "big", signed=True)
        if size <= _SMALL:
            self._write_all(header + message)
        else:  # not worth a copy: the length, then the message
            self._write_all(header)
            self._write_all(message)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]


class _ConnectionChannel:  # pragma: no cover - Windows
    __slots__ = ("_conn",)

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def read(self) -> list[Message]:
        return [self._conn.recv_bytes()]

    def write(self, message: bytes) -> None:
        self._conn.send_bytes(message)
