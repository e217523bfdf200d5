"""A worker pipe's channel: Connection's framing, whole messages only, however the bytes arrive."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from multiprocessing import Pipe
from typing import Any

import pytest

from sekai.vector.proc import frames
from sekai.vector.proc.frames import FdChannel

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="pipes are handles on Windows"),
    pytest.mark.timeout(30),  # a message lost or not completed leaves a read waiting
]


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):  # a test closed it
            os.close(fd)


def _frame(message: bytes) -> bytes:
    return len(message).to_bytes(4, "big", signed=True) + message


def _read_all(channel: FdChannel, count: int) -> list[bytes]:
    messages: list[bytes] = []
    while len(messages) < count:
        messages.extend(bytes(message) for message in channel.read())
    return messages


def test_reads_what_connection_sends_and_connection_reads_what_it_writes() -> None:
    left, right = Pipe()
    try:
        for size in (0, 1, 100, 16384, 16385, 300_000):
            message = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
            sender = threading.Thread(target=left.send_bytes, args=(message,))
            sender.start()  # a message bigger than the pipe needs a reader at the same time
            assert _read_all(frames.channel(right), 1) == [message]
            sender.join()
            writer = threading.Thread(target=frames.channel(right).write, args=(message,))
            writer.start()
            assert left.recv_bytes() == message
            writer.join()
    finally:
        left.close()
        right.close()


def test_messages_that_arrive_together_come_out_of_one_read(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, _frame(b"first") + _frame(b"") + _frame(b"third"))
    assert [bytes(m) for m in FdChannel(read_fd).read()] == [b"first", b"", b"third"]


def test_a_message_cut_anywhere_is_completed_before_read_returns(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    data = _frame(b"one message") + _frame(b"two")
    for cut in range(1, len(data)):
        os.write(write_fd, data[:cut])
        timer = threading.Timer(0.01, os.write, args=(write_fd, data[cut:]))
        timer.start()
        messages = _read_all(FdChannel(read_fd), 2)
        timer.join()
        assert messages == [b"one message", b"two"], cut


def test_long_length_header(pipe: tuple[int, int]) -> None:
    """Messages of 2 GiB or more carry -1 and an 8-byte length (the framing allows it for any
    size, which is how it is tested here)."""
    read_fd, write_fd = pipe
    header = (-1).to_bytes(4, "big", signed=True) + (5).to_bytes(8, "big")
    os.write(write_fd, header + b"hello" + _frame(b"next"))
    assert _read_all(FdChannel(read_fd), 2) == [b"hello", b"next"]


@pytest.mark.parametrize("written", [b"", _frame(b"cut short")[:7]])
def test_a_closed_pipe_raises_eof(pipe: tuple[int, int], written: bytes) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, written)
    os.close(write_fd)
    with pytest.raises(EOFError):
        FdChannel(read_fd).read()


def test_write_sends_long_messages_whole(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    message = os.urandom(1 << 20)
    received: list[Any] = []
    reader = threading.Thread(target=lambda: received.extend(_read_all(FdChannel(read_fd), 1)))
    reader.start()
    FdChannel(write_fd).write(message)
    reader.join()
    assert received == [message]
