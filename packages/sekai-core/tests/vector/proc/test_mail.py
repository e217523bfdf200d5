"""The workers' mailboxes (``sekai.vector.proc.mail``) and the futexes under them, then a
ProcVecEnv using them: what goes through the boxes, what through the pipes, and long messages
either way (every other test in this folder also runs with and without them)."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import ProcVecEnv
from sekai.vector.proc import frames, futex
from sekai.vector.proc.mail import IN_PIPE, Mail

needs_futex = pytest.mark.skipif(not futex.AVAILABLE, reason="no futexes on this platform")
# pytest-xdist's workers run a thread of their own, so from Python 3.12 on os.fork() warns in
# them (as in test_vec_env.py).
FORK_WITH_THREADS = r".*use of fork\(\) may lead to deadlocks"


@pytest.fixture
def mail() -> Any:
    box = Mail.create(3, capacity=64)
    yield box
    box.release(owner=True)


@needs_futex
def test_a_command_put_in_an_inbox_is_taken_once_and_frees_the_inbox(mail: Mail) -> None:
    assert mail.free()
    assert mail.take(1) is None
    mail.put(1, 7, b"command")
    assert not mail.free()
    assert mail.take(1) == (7, b"command")
    assert mail.take(1) is None
    assert mail.free()
    assert mail.take(0) is None  # the other inboxes stay empty


@needs_futex
def test_a_reply_is_seen_for_its_command_only(mail: Mail) -> None:
    indices = range(3)
    mail.put(2, 5, b"c")
    mail.take(2)
    assert mail.replies(indices, [0, 0, 5]) == [b"", b"", None]
    mail.send(2, 5, b"reply")
    assert mail.replies(indices, [0, 0, 5]) == [b"", b"", b"reply"]
    assert mail.replies(indices, [0, 0, 6]) == [b"", b"", None]
    assert mail.replies([2], [5], 2) == [b"ply"]  # from byte 2 on
    mail.put(2, 6, b"c")
    mail.take(2)
    mail.send(2, 6, None)
    assert mail.replies([2], [6]) == [IN_PIPE]


@needs_futex
def test_commands_put_in_every_inbox_at_once_are_taken_by_their_workers(mail: Mail) -> None:
    mail.put_all([4, 5, 6], [b"a", b"bb", b"ccc"])
    assert not mail.free()
    assert [mail.take(index) for index in range(3)] == [(4, b"a"), (5, b"bb"), (6, b"ccc")]
    assert mail.free()


@needs_futex
def test_the_last_reply_changes_the_parents_word_and_an_earlier_one_does_not(
    mail: Mail,
) -> None:
    for index in range(3):
        mail.put(index, 1, b"c")
        mail.take(index)
    before = mail.answer()
    mail.send(0, 1, b"r")
    mail.send(1, 1, b"r")
    assert mail.answer() == before  # others still working: the parent sleeps on
    mail.send(2, 1, b"r")
    assert mail.answer() != before


@needs_futex
def test_a_common_command_is_put_once_and_taken_by_each_worker_with_its_own_seq(
    mail: Mail,
) -> None:
    from sekai.vector.proc import protocol

    message = protocol.head(0, protocol.STEP) + b"the same for all"
    mail.put_common([3, 8, 5], message)
    assert not mail.free()
    for index, seq in enumerate([3, 8, 5]):
        got = mail.take(index)
        assert got is not None and got[0] == seq
        assert protocol.read_head(got[1]) == (seq, protocol.STEP)
        assert got[1][protocol.HEAD :] == b"the same for all"
    assert mail.free()
    mail.put_all([4, 9, 6], [b"a", b"b", b"c"])  # an inbox again after the common box
    assert mail.take(1) == (9, b"b")


@needs_futex
def test_a_worker_is_idle_once_it_replied_and_untaken_commands_are_found(mail: Mail) -> None:
    mail.put_all([1, 1, 1], [b"a", b"b", b"c"])
    assert mail.untaken(range(3)) == 0b111
    mail.take(1)
    assert mail.untaken(range(3)) == 0b101
    assert mail.untaken([1]) == 0
    assert not mail.idle(1)  # taken, not answered
    mail.send(1, 1, b"r")
    assert mail.idle(1) and not mail.idle(0)
    relaying = []
    for workers in (1, 4, 5, 16, 17):
        box = Mail.create(workers, capacity=64)
        relaying.append(box.relaying)
        box.release(owner=True)
    assert relaying == [0, 0, 1, 3, 4]  # those with workers to wake


@needs_futex
def test_the_parent_wakes_the_first_workers_and_each_of_them_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    woken = _spy(monkeypatch, futex, "wake", lambda word, bits: bits, static=True)
    box = Mail.create(40, capacity=64)
    try:
        box.ring()
        for index in range(40):
            box.relay(index)
        box.ring(Mail.bit(7))  # a pipe's announcement wakes its worker itself
    finally:
        box.release(owner=True)

    def workers(bits: int) -> set[int]:
        return {index for index in range(32) if bits >> index & 1}

    # 0-3 by the parent, 4-7 by worker 0, ..., 36-39 by worker 8 (bits wrap at 32), none after
    assert [workers(bits) for bits in woken] == [
        {0, 1, 2, 3},
        *({4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3} for i in range(1, 8)),
        {0, 1, 2, 3},
        {4, 5, 6, 7},
        {7},
    ]


@needs_futex
def test_an_announced_pipe_command_is_seen_by_its_worker(mail: Mail) -> None:
    assert mail.announced(1) == 0
    mail.announce(1, 9)
    assert (mail.announced(0), mail.announced(1)) == (0, 9)


@needs_futex
def test_a_futex_wait_returns_at_its_deadline_or_at_once_when_the_word_moved(
    mail: Mail,
) -> None:
    start = time.monotonic()
    mail.wait(0, mail.bell(), time.monotonic() + 0.05)
    assert time.monotonic() - start >= 0.04
    start = time.monotonic()
    mail.wait(0, mail.bell() + 1, time.monotonic() + 30)  # not the word's value: no sleep
    assert time.monotonic() - start < 10


@needs_futex
def test_a_ring_wakes_a_sleeping_worker_and_only_those_it_names(mail: Mail) -> None:
    woke: dict[int, float] = {}

    def sleeper(index: int) -> None:
        bell = mail.bell()
        mail.wait(index, bell, time.monotonic() + 5)
        woke[index] = time.monotonic()

    threads = [threading.Thread(target=sleeper, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # both asleep
    start = time.monotonic()
    mail._words[0] += 1  # the value moved, but only worker 1's bit is woken
    futex.wake(mail._bell, mail.bit(1))
    threads[1].join(5)
    assert woke[1] - start < 4
    assert 0 not in woke
    mail.ring()
    threads[0].join(5)
    assert 0 in woke


class Blob(sekai.Env):  # type: ignore[type-arg]
    """Holds a payload that get_attr and set_attr move around."""

    observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
    action_space = sekai.Discrete(2)

    def __init__(self) -> None:
        self.payload: Any = None

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, dtype=np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(2, dtype=np.float32), 1.0, False, False, {})

    def big_or_slow(self) -> Any:
        """A reply too long for a box at once (with ``payload`` set), or a short one after a
        while."""
        if self.payload is not None:
            return np.ones(100_000)
        time.sleep(0.3)
        return None


def _spy(
    monkeypatch: pytest.MonkeyPatch,
    owner: type,
    name: str,
    note: Any,
    *,
    static: bool = False,
) -> list[Any]:
    """Record ``note(*args)`` on every call of ``owner.name`` (which still runs)."""
    seen: list[Any] = []
    original = getattr(owner, name)

    def spy(*args: Any) -> Any:
        seen.append(note(*args))
        return original(*args)

    monkeypatch.setattr(owner, name, staticmethod(spy) if static else spy)
    return seen


def _vec(num_envs: int = 4, workers: int = 2) -> ProcVecEnv:
    return ProcVecEnv([Blob] * num_envs, num_workers=workers, context="fork")


def test_step_goes_through_the_mailboxes_where_there_are_futexes(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = _spy(monkeypatch, frames.FdChannel, "write", lambda self, message, *room: message)
    with _vec() as vec:
        vec.reset(seed=0)
        writes.clear()
        for _ in range(5):
            vec.step(np.zeros(4, dtype=np.int64))
        assert len(writes) == (0 if transport == "mail" else 5 * 2)
        # send() always posts through the pipes: several commands may wait in a worker
        writes.clear()
        vec.send(np.zeros(2, dtype=np.int64), [0, 3])
        assert sorted(vec.recv(2).env_ids.tolist()) == [0, 3]
        assert len(writes) == 2


def test_steps_look_at_the_pipes_and_sentinels_at_most_every_50_ms(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sekai.vector.proc.poller import Poller

    if transport != "mail":
        pytest.skip("through the pipes every reply is waited for on them")
    waits = _spy(monkeypatch, Poller, "wait", lambda self, timeout: timeout)
    with _vec() as vec:
        vec.reset(seed=0)
        waits.clear()
        start = time.monotonic()
        for _ in range(20):
            vec.step(np.zeros(4, dtype=np.int64))
        elapsed = time.monotonic() - start
        looks = len(waits)  # before close(), which waits on the pipes
    # one look before a call and one while it waits, each at most every 50 ms
    assert looks <= 2 * (elapsed / 0.05 + 1)


class Wide(Blob):
    """Steps with a wide Box action; the reward tells the action's first and last values."""

    action_space = sekai.Box(-1e9, 1e9, shape=(2000,), dtype=np.float32)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        reward = float(action[0]) * 1000 + float(action[-1])
        return sekai.StepResult(np.zeros(2, dtype=np.float32), reward, False, False, {})


def test_a_batch_too_long_for_the_common_box_reaches_each_worker_in_its_inbox(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sekai.vector.proc.pool import Pool

    common = _spy(monkeypatch, Pool, "request_common", lambda self, *args: args[0])
    inboxes = _spy(monkeypatch, Mail, "put_all", lambda self, seqs, messages: len(messages))
    with ProcVecEnv([Wide] * 16, num_workers=2, context="fork") as vec:
        vec.reset(seed=0)
        # 128 KB in all (no common box holds it), 64 KB a worker (each inbox holds its rows)
        actions = np.zeros((16, 2000), dtype=np.float32)
        actions[:, 0] = np.arange(16)
        actions[:, -1] = -np.arange(16)
        rewards = vec.step(actions).rewards
        np.testing.assert_array_equal(rewards, np.arange(16) * 1000 - np.arange(16))
        assert common == []
        assert inboxes[-1:] == ([2] if transport == "mail" else [])  # not the pipes
    with _vec(6, 4) as vec:  # uneven slices (2, 2, 1, 1): each worker reads its own rows
        vec.reset(seed=0)
        assert vec.step(np.ones(6, dtype=np.int64)).rewards.tolist() == [1.0] * 6
        assert len(common) == (1 if transport == "mail" else 0)


def test_messages_too_long_for_a_box_go_through_the_pipes_both_ways(transport: str) -> None:
    rng = np.random.default_rng(0)
    # Longer than the boxes (64 KiB) and than what a pipe holds: the parent writes while
    # the worker reads.
    payload = rng.random(1_000_000)
    with _vec() as vec:
        vec.reset(seed=0)
        vec.set_attr("payload", [payload, None, payload * 2, None])
        got = vec.get_attr("payload")
        np.testing.assert_array_equal(got[0], payload)
        np.testing.assert_array_equal(got[2], payload * 2)
        assert got[1] is None and got[3] is None
        vec.set_attr("payload", [None] * 4)  # short again: back through the boxes
        assert vec.get_attr("payload") == [None] * 4
        assert vec.step(np.zeros(4, dtype=np.int64)).rewards.tolist() == [1.0] * 4


def test_many_steps_never_wait_for_a_missed_wake_up(transport: str) -> None:
    # A step takes a few milliseconds. A worker missing its wake-up sleeps a second before
    # looking again, a parent 50 ms: 100 steps would take at least 5 s. With 10 workers the
    # parent wakes 4 of them and workers 0 and 1 wake the other 6.
    with _vec(10, 10) as vec:
        vec.reset(seed=0)
        start = time.monotonic()
        for _ in range(100):
            vec.step(np.zeros(10, dtype=np.int64))
            assert time.monotonic() - start < 4


class Sleepy(Blob):
    """Action 1 makes a step last 0.8 s; sub-envs 4 to 7 take 0.8 s to reset."""

    def __init__(self, rank: int) -> None:
        super().__init__()
        self.rank = rank

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        if 4 <= self.rank <= 7:
            time.sleep(0.8)
        return super().reset(seed=seed, options=options)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if int(action) == 1:
            time.sleep(0.8)
        return super().step(action)


def _sleepy(rank: int) -> Any:
    return lambda: Sleepy(rank)


def test_a_worker_still_busy_with_a_dropped_step_does_not_hold_back_the_others(
    transport: str,
) -> None:
    # Worker 0 wakes workers 4 to 7 when it takes its command: busy with the step send()
    # started, it would take them 0.8 + 0.8 s to reset, past the timeout; woken by the parent
    # they take 0.8 s, as worker 0 does to finish its step. Both waits last as long, so that
    # the timeout leaves 0.5 s to a loaded machine while 4 to 7, unwoken, still miss it unless
    # they wake on their own (every 1 s) within 0.5 s of reset().
    fns = [_sleepy(rank) for rank in range(8)]
    with ProcVecEnv(fns, num_workers=8, context="fork", reset_timeout=1.3) as vec:
        vec.reset(seed=0)
        vec.send(np.array([1]), env_ids=[0])
        vec.reset(seed=1)  # drops the step in flight; worker 0 finishes it first
        assert vec.step(np.zeros(8, dtype=np.int64)).rewards.tolist() == [1.0] * 8


class Held(Blob):
    """Action 1 makes a step wait until the file ``release`` exists."""

    def __init__(self, release: str) -> None:
        super().__init__()
        self.release = release

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if int(action) == 1:
            deadline = time.monotonic() + 30  # only bounds a failure: the test releases it
            while not os.path.exists(self.release) and time.monotonic() < deadline:
                time.sleep(0.005)
        return super().step(action)


@needs_futex
def test_the_parent_wakes_every_worker_itself_while_one_that_wakes_others_is_busy(
    transport: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if transport != "mail":
        pytest.skip("the pipes wake each worker through its own pipe")
    # Worker 0's step lasts until reset() rings: busy then however slow the machine (a step
    # of fixed length may be over and its reply read by then, and the tree rightly used).
    release, armed = tmp_path / "release", threading.Event()

    def note(self: Mail, bits: int | None = None) -> int | None:
        if armed.is_set():
            release.touch()
        return bits

    rings = _spy(monkeypatch, Mail, "ring", note)
    fns = [functools.partial(Held, str(release)) for _ in range(8)]
    with ProcVecEnv(fns, num_workers=8, context="fork") as vec:
        vec.reset(seed=0)
        vec.step(np.zeros(8, dtype=np.int64))
        assert rings[-1] is None  # idle: the tree
        vec.send(np.array([1]), env_ids=[0])
        armed.set()
        rings.clear()
        vec.reset(seed=1)
        assert rings[0] == futex.ALL  # worker 0 busy with the step send() started


def test_a_dead_worker_that_wakes_others_is_reported_as_soon_as_any_other(transport: str) -> None:
    with _vec(10, 10) as vec:
        vec.reset(seed=0)
        vec.step(np.zeros(10, dtype=np.int64))
        process = vec._pool.workers[0].process  # type: ignore[union-attr]
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        start = time.monotonic()
        with pytest.raises(sekai.VecEnvWorkerError) as info:
            vec.step(np.zeros(10, dtype=np.int64))
        # the workers it wakes must not sleep out their 1 s before the parent hears of them
        assert time.monotonic() - start < 0.5
        assert info.value.worker == 0


def test_get_attr_of_a_bytes_name_fails_as_in_the_sub_env(transport: str) -> None:
    with _vec() as vec, pytest.raises(TypeError, match="attribute name must be string"):
        vec.get_attr(b"\x00\x05abc")  # type: ignore[arg-type]


def test_a_long_reply_is_kept_while_another_worker_is_still_busy(transport: str) -> None:
    # Worker 0's reply goes through its pipe at once; while worker 1 works, the parent looks
    # at the pipes (for dead workers) and reads it there: it must not be lost.
    with ProcVecEnv([Blob, Blob], num_workers=2, context="fork") as vec:
        vec.set_attr("payload", [1, None])
        for _ in range(2):
            got = vec.call("big_or_slow")
            np.testing.assert_array_equal(got[0], np.ones(100_000))
            assert got[1] is None


def test_a_worker_of_many_sub_envs_gets_boxes_that_hold_its_step_reply() -> None:
    assert Mail.capacity_for(1) == 1 << 16
    assert Mail.capacity_for(100) == 100 * 2048  # whole pages
    assert Mail.capacity_for(101) % 4096 == 0 and Mail.capacity_for(101) >= 101 * 2048


@needs_futex
def test_a_pool_sizes_its_boxes_for_its_widest_worker(transport: str) -> None:
    with ProcVecEnv([Blob] * 65, num_workers=2, context="fork") as vec:  # 33 and 32
        mail = vec._pool.mail  # type: ignore[union-attr]
        if transport == "pipes":
            assert mail is None
        else:
            assert mail is not None and mail.capacity == Mail.capacity_for(33)


@needs_futex
def test_mailboxes_without_room_in_dev_shm_leave_proc_vec_env_its_pipes(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = Mail.size(2, Mail.capacity_for(2))

    def fallocate(fd: int, offset: int, length: int) -> None:
        if length == size:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", fallocate, raising=False)
    expected = 1 if transport == "mail" else 0  # pipes: no mailboxes to make
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", FORK_WITH_THREADS, DeprecationWarning)
        vec = _vec(4, 2)
    with vec:
        assert vec._pool.mail is None  # type: ignore[union-attr]
        assert vec.shared_memory  # the observations' block fits
        vec.reset(seed=0)
        assert vec.step(np.zeros(4, dtype=np.int64)).rewards.tolist() == [1.0] * 4
    assert [w.category for w in caught] == [sekai.SharedMemoryWarning] * expected
    assert [w.filename for w in caught] == [__file__] * expected  # the caller's line
    if expected:
        assert str(caught[0].message).startswith(
            "ProcVecEnv cannot reserve 320.2 KiB of shared memory for the mailboxes of 2 worker "
            "processes: /dev/shm has "
        )
        assert str(caught[0].message).endswith(
            "so every call goes through the pipes instead (slower with many workers). To keep "
            "shared memory, use fewer sub-envs or workers, or give /dev/shm more room (with "
            "Docker: docker run --shm-size=1g ...)."
        )


def test_futexes_a_sandbox_refuses_leave_proc_vec_env_its_pipes() -> None:
    assert futex._works(lambda *args: -1) is False  # e.g. ENOSYS under a seccomp filter
    assert futex._works(lambda *args: 0) is False  # a wait that did not see the word's value

    def refuses_waits(*args: Any) -> int:  # wakes work, waits fail (not with EAGAIN)
        if args[2] == futex._WAIT_BITSET:
            ctypes.set_errno(errno.ENOSYS)
            return -1
        return 0

    assert futex._works(refuses_waits) is False


class Slow(Blob):
    def step(self, action: Any) -> sekai.StepResult[Any]:
        time.sleep(0.4)
        return super().step(action)


def test_a_dead_worker_is_found_while_signals_keep_interrupting_the_wait(transport: str) -> None:
    # A signal every 20 ms (as a sampling profiler sends) ends each wait on the parent's futex
    # word early; the dead worker must still be found (not reported as a timeout 10 s later).
    with ProcVecEnv([Slow, Slow], num_workers=2, context="fork", step_timeout=10.0) as vec:
        vec.reset(seed=0)
        victim = vec._pool.workers[0].process.pid  # type: ignore[union-attr]
        killer = threading.Timer(0.1, os.kill, (victim, signal.SIGKILL))
        previous = signal.signal(signal.SIGALRM, lambda *args: None)
        signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)
        killer.start()
        try:
            with pytest.raises(sekai.VecEnvWorkerError) as caught:
                vec.step(np.zeros(2, dtype=np.int64))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, previous)
            killer.join()
    assert caught.value.exc_type == "EOFError"
    assert "exited unexpectedly" in caught.value.message


def test_replies_are_copied_out_of_the_outboxes(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A view into an outbox kept by a traceback would keep the block mapped after close().
    from sekai.vector.proc.handle import WorkerHandle

    kinds = _spy(monkeypatch, WorkerHandle, "decode", lambda handle, body: type(body))
    with _vec() as vec:
        vec.reset(seed=0)
        kinds.clear()
        vec.step(np.zeros(4, dtype=np.int64))
        assert kinds == ([bytes, bytes] if transport == "mail" else [memoryview, memoryview])


class _Inbox:
    """A mailbox whose command is put just after the worker first looked (as by a call
    Ctrl-C interrupts, the next call going through the pipe)."""

    def __init__(self, command: bytes) -> None:
        self.command: bytes | None = command
        self.looks = 0

    def relay(self, index: int) -> None:
        pass

    def bell(self) -> int:
        return 0

    def announced(self, index: int) -> int:
        return 0

    def take(self, index: int) -> tuple[int, bytes] | None:
        self.looks += 1
        if self.looks == 1 or self.command is None:
            return None
        command, self.command = self.command, None
        return 5, command


def test_a_worker_runs_a_mailbox_command_before_a_later_one_from_its_pipe() -> None:
    from multiprocessing import Pipe

    from sekai.vector.proc import protocol, worker

    ours, theirs = Pipe()
    try:
        frames.channel(theirs).write(protocol.head(6, protocol.GET) + b"B")
        inbox = _Inbox(protocol.head(5, protocol.GET) + b"A")
        serving = worker.Worker(ours, inbox, 0)  # type: ignore[arg-type]
        commands = serving._next(frames.channel(ours))
        assert [(seq, op, mailed) for seq, op, _, mailed in commands] == [
            (5, protocol.GET, True),
            (6, protocol.GET, False),
        ]
    finally:
        ours.close()
        theirs.close()


def test_a_ring_moves_the_bell_so_a_worker_about_to_sleep_does_not(mail: Mail) -> None:
    bell = mail.bell()
    mail.ring()
    assert mail.bell() != bell


def test_only_the_owner_removes_the_name_of_the_block() -> None:
    box = Mail.create(2, capacity=64)
    path = Path("/dev/shm") / box.name
    try:
        worker = Mail.attach(box.name, 2, 64)
        worker.release(owner=False)
        assert path.exists()
    finally:
        box.release(owner=True)
    assert not path.exists()


@needs_futex
def test_a_futex_wait_the_kernel_refuses_raises_with_its_reason() -> None:
    words = (ctypes.c_int32 * 2)()
    unaligned = ctypes.addressof(words) + 1  # the kernel takes only aligned words
    with pytest.raises(OSError, match="futex wait failed: EINVAL"):
        futex.wait(unaligned, 0, futex.ALL, time.monotonic() + 5)
