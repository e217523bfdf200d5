"""A worker pipe's channel: Connection's framing, whole messages only, however the bytes arrive,
and a read cut short by Ctrl-C continued by the next one (or failing clearly)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
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
        received = channel.read()
        messages.extend(bytes(message) for message in received)
        del received[:]  # taken: the channel keeps a message until its reader removes it
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


def test_a_message_not_there_whole_is_kept_and_completed_by_later_reads(
    pipe: tuple[int, int],
) -> None:
    """A read takes what the pipe holds and returns, so a call waiting for a long reply can be
    interrupted between reads (Ctrl-C) without losing what arrived."""
    read_fd, write_fd = pipe
    long = os.urandom(200_000)  # more than the pipe holds
    data = _frame(b"head") + _frame(long)
    channel = FdChannel(read_fd)
    os.write(write_fd, data[:50_000])
    assert [bytes(m) for m in channel.read()] == [b"head"]
    channel.messages.clear()
    for start in range(50_000, len(data) - 30_000, 30_000):
        os.write(write_fd, data[start : start + 30_000])
        assert channel.read() == []  # no message is complete: what arrived is kept
    os.write(write_fd, data[start + 30_000 :])
    assert _read_all(channel, 1) == [long]


class _Alarm(Exception):
    pass


class _Box:
    stored = 0


def _store_then_call(box: _Box, calls: list[int], n: int) -> None:
    while n:  # the window of FdChannel._read_more: a store, then a C call (no Python frame)
        box.stored = n
        calls.append(n)
        n -= 1


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_python_never_raises_a_pending_signal_between_a_store_and_the_call_after_it() -> None:
    """What FdChannel relies on to continue a read Ctrl-C interrupted, on every Python it runs
    on: a signal that arrives in the window is raised once the call has run, not before."""

    def alarm(*_: Any) -> None:
        raise _Alarm

    previous = signal.signal(signal.SIGALRM, alarm)
    box, windows = _Box(), 0
    try:
        for _ in range(1000):
            calls = [0]
            box.stored = 0
            try:
                signal.setitimer(signal.ITIMER_REAL, random.uniform(1e-4, 5e-4))
                _store_then_call(box, calls, 10**9)
            except _Alarm:
                windows += 1
                assert calls[-1] == box.stored, "raised after the store, before the call"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert windows == 1000


@pytest.mark.parametrize(
    "cut", [2, 4, 9, 100], ids=["in-length", "after-length", "long-length", "in-body"]
)
def test_a_read_interrupted_after_it_took_bytes_is_continued_by_the_next(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch, cut: int
) -> None:
    """Ctrl-C raised once a read has returned, before the caller kept its bytes (the window
    a real Ctrl-C can hit): the next read starts where the interrupted one stopped."""
    read_fd, write_fd = pipe
    long_header = cut == 9
    body = os.urandom(150_000)
    if long_header:
        frame = (-1).to_bytes(4, "big", signed=True) + len(body).to_bytes(8, "big") + body
    else:
        frame = _frame(body)
    channel = FdChannel(read_fd)
    os.write(write_fd, frame[:cut])
    assert channel.read() == []
    readv = os.readv
    calls: list[int] = []

    def interrupted(*args: Any) -> int:
        calls.append(readv(*args))
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "readv", interrupted)
    os.write(write_fd, frame[cut : cut + 40_000])
    with pytest.raises(KeyboardInterrupt):
        channel.read()
    assert calls and calls[0] > 0
    monkeypatch.undo()
    writer = threading.Thread(target=os.write, args=(write_fd, frame[cut + 40_000 :]))
    writer.start()
    assert _read_all(channel, 1) == [body]
    writer.join()
    os.write(write_fd, _frame(b"next"))
    assert _read_all(channel, 1) == [b"next"]


def test_a_read_interrupted_while_it_parses_what_it_took_is_parsed_by_the_next(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsing a first read (room for the rest of a long message included) takes a while:
    Ctrl-C there leaves the bytes to the next read."""
    read_fd, write_fd = pipe
    body = os.urandom(60_000)
    data = _frame(b"first") + _frame(body)
    split = frames._split
    calls: list[int] = []

    def interrupted(taken: bytes) -> Any:
        calls.append(len(taken))
        if len(calls) == 1:
            raise KeyboardInterrupt
        return split(taken)

    monkeypatch.setattr(frames, "_split", interrupted)
    channel = FdChannel(read_fd)
    os.write(write_fd, data[:30_000])
    with pytest.raises(KeyboardInterrupt):
        channel.read()
    assert not channel.torn
    assert [bytes(m) for m in channel.read()] == [b"first"]
    channel.messages.clear()
    assert calls == [30_000, 30_000]  # the same bytes, not a new read
    os.write(write_fd, data[30_000:])
    assert _read_all(channel, 1) == [body]


def test_a_read_whose_bytes_were_lost_to_ctrl_c_fails_instead_of_reading_out_of_step(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first read cannot know how many bytes it takes: lost, they cannot be found again."""
    read_fd, write_fd = pipe
    channel = FdChannel(read_fd)
    read = os.read

    def interrupted(*args: Any) -> bytes:
        read(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "read", interrupted)
    os.write(write_fd, _frame(b"lost") + _frame(b"also lost"))
    with pytest.raises(KeyboardInterrupt):
        channel.read()
    monkeypatch.undo()
    assert channel.torn
    os.write(write_fd, _frame(b"after"))
    with pytest.raises(EOFError, match="interrupted"):
        channel.read()


@pytest.fixture
def sigint() -> Iterator[None]:
    """Python's own SIGINT handler, as in a terminal (the tests may run with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("sigint")
@pytest.mark.parametrize("blocking", [False, True], ids=["non-blocking", "blocking"])
def test_ctrl_c_as_a_first_read_takes_bytes_is_held_where_the_read_cannot_wait(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch, blocking: bool
) -> None:
    """A real SIGINT while the first read of a message takes its bytes: on a non-blocking end
    (the parent's) Ctrl-C is held until they are kept, and the next read returns them; on a
    blocking end, whose read may wait for good, it is not held, and the bytes are lost."""
    read_fd, write_fd = pipe
    os.set_blocking(read_fd, blocking)
    channel = FdChannel(read_fd)
    read = os.read

    def interrupted(*args: Any) -> bytes:
        data = read(*args)
        os.kill(os.getpid(), signal.SIGINT)
        return data

    monkeypatch.setattr(os, "read", interrupted)
    os.write(write_fd, _frame(b"first") + _frame(b"second"))
    with pytest.raises(KeyboardInterrupt):
        channel.read()
    monkeypatch.undo()
    assert channel.torn is blocking
    if blocking:
        with pytest.raises(frames.TornStream):
            channel.read()
    else:
        assert [bytes(m) for m in channel.read()] == [b"first", b"second"]


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
    with pytest.raises(EOFError):  # a message cut short: once its start is read
        _read_all(FdChannel(read_fd), 1)


def test_write_sends_long_messages_whole(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    message = os.urandom(1 << 20)
    received: list[Any] = []
    reader = threading.Thread(target=lambda: received.extend(_read_all(FdChannel(read_fd), 1)))
    reader.start()
    FdChannel(write_fd).write(message)
    reader.join()
    assert received == [message]


def test_a_non_blocking_end_calls_make_room_whenever_the_pipe_is_full(
    pipe: tuple[int, int],
) -> None:
    """One thread writes and reads: whenever the pipe is full, make_room reads some of it."""
    read_fd, write_fd = pipe
    os.set_blocking(write_fd, False)  # as the parent's pool makes its ends
    os.set_blocking(read_fd, False)
    message = os.urandom(1 << 20)
    reader = FdChannel(read_fd)
    received: list[bytes] = []
    calls = 0

    def make_room() -> None:
        nonlocal calls
        calls += 1
        received.extend(bytes(m) for m in reader.read())
        del reader.messages[:]

    writer = FdChannel(write_fd)
    writer.write(message, make_room)
    assert not writer.cut
    while not received:
        received.extend(bytes(m) for m in reader.read())
        del reader.messages[:]
    assert received == [message]
    assert calls >= len(message) // (1 << 16)  # the pipe holds 64 KiB


def test_a_read_of_a_non_blocking_end_with_nothing_there_returns_nothing(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    os.set_blocking(read_fd, False)
    channel = FdChannel(read_fd)
    assert channel.read() == [] and not channel.torn and not channel.pending
    frame = _frame(b"x" * 100_000)
    os.write(write_fd, frame[:60_000])  # the start of a message, no more yet
    assert channel.read() == [] and channel.read() == []  # kept, waiting for the rest
    assert not channel.torn
    os.write(write_fd, frame[60_000:])
    assert _read_all(channel, 1) == [b"x" * 100_000]


def test_a_write_given_up_mid_frame_is_cut(pipe: tuple[int, int]) -> None:
    _, write_fd = pipe
    os.set_blocking(write_fd, False)

    def make_room() -> None:
        raise BrokenPipeError("the reader is gone")

    writer = FdChannel(write_fd)
    with pytest.raises(BrokenPipeError, match="the reader is gone"):
        writer.write(os.urandom(1 << 20), make_room)
    assert writer.cut  # part of it is in the pipe: the rest can never follow in step


def test_pending_tells_a_reply_left_in_the_channel_by_ctrl_c(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the read that completes a message: the pipe is empty, the channel holds it."""
    read_fd, write_fd = pipe
    body = os.urandom(50_000)  # the pipe holds it whole
    frame = _frame(body)
    channel = FdChannel(read_fd)
    assert not channel.pending
    os.write(write_fd, frame[:1000])
    assert channel.read() == [] and not channel.pending
    readv = os.readv

    def interrupted(*args: Any) -> int:
        readv(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "readv", interrupted)
    os.write(write_fd, frame[1000:])
    with pytest.raises(KeyboardInterrupt):
        channel.read()
    monkeypatch.undo()
    assert frames._available(read_fd) == 0 and channel.pending
    assert [bytes(m) for m in channel.read()] == [body]
    assert channel.pending  # kept until the reader removes it
    channel.messages.clear()
    assert not channel.pending
