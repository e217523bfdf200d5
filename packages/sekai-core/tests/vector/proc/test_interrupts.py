"""Ctrl-C in the parent, simulated deterministically in this process (fork): a reply whose
unpickling raises KeyboardInterrupt once, pipe reads that raise it once they have taken
bytes (where a real Ctrl-C lands between the read and the code that keeps its bytes), and
SIGINTs sent to this process at chosen moments (while send() posts, while a read takes bytes).

Whatever call is interrupted, nothing is lost: ``send()`` raises once its sub-envs are in
flight (or at once while it waits on a full pipe), ``recv()`` hands the results out later, an
interrupted ``step()``'s replies are dropped before the next command, and a read cut short is
continued by the next one, or, where the bytes it took are gone (Ctrl-C could not be held),
fails clearly instead of leaving the pipe out of step. Ctrl-C while the workers start leaves no
zombie, and no worker's traceback; Ctrl-C while close() waits stops the workers without waiting
out close_timeout, and what a second Ctrl-C keeps close() from releasing, the next close()
releases.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing import popen_fork
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.testing.fixtures import interrupted_once
from sekai.vector import ProcVecEnv, _batches
from sekai.vector.proc import processes, worker
from sekai.vector.proc.mail import Mail
from sekai.vector.proc.pool import Pool

pytestmark = pytest.mark.timeout(60)  # a pipe left out of step hangs the next call

RAISE = 2  # the action Marked refuses
BIG = 1 << 20  # float32 entries of a big observation: 4 MiB, many pipe reads

_interrupts = [0]  # KeyboardInterrupts left to raise while a Mark is unpickled (in the parent)


def _unpickle_mark(steps: int) -> int:
    if _interrupts[0]:
        _interrupts[0] -= 1
        raise KeyboardInterrupt
    return steps


class Mark:
    """An info entry that arrives as its step count; unpickling it is where Ctrl-C lands."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle_mark, (self.steps,))


class Marked(sekai.Env):  # type: ignore[type-arg]
    """Observation ``[rank, steps]`` (``size`` entries, the rest zeros); info ``{"steps",
    "mark"}``; action 2 raises ValueError."""

    def __init__(self, rank: int, size: int = 2) -> None:
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(size,))
        self.action_space = sekai.Discrete(3)
        self.rank = rank
        self.size = size
        self.steps = 0

    def _obs(self) -> Any:
        obs = np.zeros(self.size, np.float32)
        obs[:2] = self.rank, self.steps
        return obs

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.steps = 0
        return sekai.ResetResult(self._obs(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if int(action) == RAISE:
            raise ValueError(f"sub-env {self.rank} refuses action {RAISE}")
        self.steps += 1
        info = {"steps": self.steps, "mark": Mark(self.steps)}
        return sekai.StepResult(self._obs(), float(action), False, False, info)


def _marked(n: int, **kwargs: Any) -> list[Callable[[], Marked]]:
    return [lambda i=i: Marked(i, **kwargs) for i in range(n)]


@pytest.fixture
def interrupt() -> Iterator[Callable[[int], None]]:
    """``interrupt(n)``: the next ``n`` Marks unpickled in this process raise KeyboardInterrupt."""

    def arm(count: int) -> None:
        _interrupts[0] = count

    yield arm
    _interrupts[0] = 0


@pytest.fixture
def sigint() -> Iterator[None]:
    """Python's own SIGINT handler, as in a terminal (the tests may run with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    """A real Ctrl-C: SIGINT to this process, raised wherever Python's handler runs it."""
    os.kill(os.getpid(), signal.SIGINT)


def _rows(result: Any) -> dict[int, tuple[list[float], int, int]]:
    """Each sub-env's ``(observation[:2], info["steps"], info["mark"])`` in a recv() result."""
    return {
        rank: (result.observations[row, :2].tolist(), info["steps"], info["mark"])
        for row, (rank, info) in enumerate(zip(result.env_ids.tolist(), result.infos))
    }


# -- Ctrl-C while recv() unpickles or joins the results ------------------------------------------


@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
def test_ctrl_c_while_recv_unpickles_a_reply_loses_nothing(
    interrupt: Callable[[int], None], shared_memory: bool | None
) -> None:
    with ProcVecEnv(_marked(4), context="fork", num_workers=2, shared_memory=shared_memory) as vec:
        vec.reset()
        vec.send([1, 1, 1, 1])
        interrupt(1)
        with pytest.raises(KeyboardInterrupt):
            vec.recv()
        result = vec.recv()  # both replies: the one being unpickled and the other
        assert _rows(result) == {rank: ([rank, 1], 1, 1) for rank in range(4)}
        vec.send([1, 1], [2, 0])
        interrupt(2)  # the same reply, interrupted twice
        for _ in range(2):
            with pytest.raises(KeyboardInterrupt):
                vec.recv(batch_size=1)
        assert _rows(vec.recv(batch_size=2)) == {0: ([0, 2], 2, 2), 2: ([2, 2], 2, 2)}
        assert [info["steps"] for info in vec.step([1, 1, 1, 1]).infos] == [3, 2, 3, 2]


@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
def test_ctrl_c_while_recv_joins_the_results_loses_nothing(
    monkeypatch: pytest.MonkeyPatch, shared_memory: bool | None
) -> None:
    monkeypatch.setattr(_batches, "join", interrupted_once(_batches.join))
    with ProcVecEnv(
        _marked(3, size=2), context="fork", num_workers=1, shared_memory=shared_memory
    ) as vec:
        vec.reset()
        vec.send([1, 1, 1])
        with pytest.raises(KeyboardInterrupt):
            vec.recv(batch_size=2)
        assert _rows(vec.recv(batch_size=2)) == {rank: ([rank, 1], 1, 1) for rank in range(2)}
        assert _rows(vec.recv(batch_size=1)) == {2: ([2, 1], 1, 1)}


def test_an_error_in_a_reply_whose_unpickling_was_interrupted_is_raised_next(
    interrupt: Callable[[int], None],
) -> None:
    with ProcVecEnv(_marked(3), context="fork", num_workers=1) as vec:
        vec.reset()
        vec.send([1, RAISE, 1])
        interrupt(1)
        with pytest.raises(KeyboardInterrupt):
            vec.recv(batch_size=2)
        with pytest.raises(ValueError, match="sub-env 1 refuses action 2") as caught:
            vec.recv(batch_size=2)
        assert caught.value.rank == 1  # type: ignore[attr-defined]
        assert _rows(vec.recv(batch_size=2)) == {0: ([0, 1], 1, 1), 2: ([2, 1], 1, 1)}


def test_ctrl_c_between_taking_a_reply_and_its_pool_dropping_it_does_not_repeat_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Pool, "drop", interrupted_once(Pool.drop))
    with ProcVecEnv(_marked(2), context="fork", num_workers=1) as vec:
        vec.reset()
        vec.send([1, 1])
        with pytest.raises(KeyboardInterrupt):
            vec.recv()
        result = vec.recv()
        assert result.env_ids.tolist() == [0, 1]
        assert _rows(result) == {0: ([0, 1], 1, 1), 1: ([1, 1], 1, 1)}
        with pytest.raises(RuntimeError, match="only 0 sub-envs have actions in flight"):
            vec.recv(batch_size=1)
        vec.send([1, 1])  # a copy of the first results kept would come back here
        assert _rows(vec.recv()) == {0: ([0, 2], 2, 2), 1: ([1, 2], 2, 2)}


def test_ctrl_c_while_step_unpickles_drops_its_replies_before_the_next_command(
    interrupt: Callable[[int], None],
) -> None:
    with ProcVecEnv(_marked(4), context="fork", num_workers=2, shared_memory=False) as vec:
        vec.reset()
        interrupt(1)
        with pytest.raises(KeyboardInterrupt):
            vec.step([1, 1, 1, 1])
        result = vec.step([0, 1, 0, 1])  # the sub-envs stepped twice, as with SyncVecEnv
        assert [info["steps"] for info in result.infos] == [2, 2, 2, 2]
        assert result.rewards.tolist() == [0.0, 1.0, 0.0, 1.0]


# -- Ctrl-C while send() posts ------------------------------------------------------------------


@pytest.mark.usefixtures("sigint")
@pytest.mark.parametrize("thread", [False, True], ids=["alone", "with-a-thread"])
@pytest.mark.parametrize("after", [False, True], ids=["before-a-write", "after-a-write"])
def test_ctrl_c_while_send_posts_is_raised_once_the_sub_envs_are_in_flight(
    monkeypatch: pytest.MonkeyPatch, after: bool, thread: bool
) -> None:
    """SIGINT while the first worker's command is written (the second's not yet): send()
    raises KeyboardInterrupt once every sub-env is in flight, and recv() returns each once,
    with its observation, reward and info of the same step. Another thread (which a signal
    may reach instead of the main one) changes nothing."""
    real = Pool._send
    fired: list[bool] = []

    def send(self: Pool, *args: Any) -> None:
        if not after and not fired:
            fired.append(True)
            _ctrl_c()
        real(self, *args)
        if after and not fired:
            fired.append(True)
            _ctrl_c()

    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    if thread:
        other.start()
    try:
        with ProcVecEnv(_marked(4), context="fork", num_workers=2) as vec:
            vec.reset()
            monkeypatch.setattr(Pool, "_send", send)  # send()'s commands go through the pipes
            with pytest.raises(KeyboardInterrupt):
                vec.send([1, 0, 1, 0])
            assert fired and vec._batches.in_flight.all()
            result = vec.recv(batch_size=4)
            assert sorted(result.env_ids.tolist()) == [0, 1, 2, 3]
            assert _rows(result) == {rank: ([rank, 1], 1, 1) for rank in range(4)}
            assert result.rewards.tolist() == [1.0 - rank % 2 for rank in result.env_ids]
            vec.send([1, 1, 1, 1])  # each sub-env stepped once per send
            assert _rows(vec.recv()) == {rank: ([rank, 2], 2, 2) for rank in range(4)}
    finally:
        idle.set()


class _Hangs(sekai.Env):  # type: ignore[type-arg]
    """Actions of 400 KB (more than a pipe holds); action[0] == 1 hangs the step until the
    file ``release`` exists."""

    def __init__(self, release: str) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Box(-1.0, 1.0, shape=(100_000,))
        self.release = release

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        while action[0] == 1 and not os.path.exists(self.release):
            time.sleep(0.01)
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


@pytest.mark.usefixtures("sigint")
def test_ctrl_c_ends_a_send_that_waits_on_the_full_pipe_of_a_hung_worker(
    tmp_path: Path,
) -> None:
    """The wait for room in a pipe is not held: Ctrl-C ends it while the worker still hangs
    (held, it would end only once the worker reads again). The command it cut stops its
    worker; the sub-env it was for is not in flight."""
    release = tmp_path / "release"
    fns = [lambda: _Hangs(str(release))] * 2
    with ProcVecEnv(fns, context="fork", num_workers=1, close_timeout=1) as vec:
        vec.reset()
        hang, act = np.zeros((1, 100_000), np.float32), np.zeros((1, 100_000), np.float32)
        hang[0, 0] = 1
        vec.send(hang, [0])  # the worker reads it whole, then hangs in the step
        timers = [threading.Timer(0.5, _ctrl_c), threading.Timer(20, release.touch)]
        for timer in timers:
            timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                vec.send(act, [1])  # fills the pipe: waits for the worker to read on
            assert not release.exists()  # ended by Ctrl-C, not by the worker
        finally:
            for timer in timers:
                timer.cancel()
        assert vec._batches.in_flight.tolist() == [True, False]
        with pytest.raises(sekai.VecEnvWorkerError, match="a command to it was cut short"):
            vec.recv(batch_size=1)


# -- Ctrl-C in the middle of a long reply ------------------------------------------------------


def _raise() -> None:
    raise KeyboardInterrupt


def _interrupt_read(
    monkeypatch: pytest.MonkeyPatch, name: str, at: int, how: Callable[[], None] = _raise
) -> Callable[[], list[int]]:
    """Make ``os.<name>`` call ``how`` once (raise KeyboardInterrupt, or a real Ctrl-C), after
    its ``at``-th call (in this process) took its bytes; returns the sizes each call took."""
    real = getattr(os, name)
    taken: list[int] = []
    parent = os.getpid()

    def read(*args: Any) -> Any:
        got = real(*args)
        if os.getpid() == parent:
            taken.append(got if isinstance(got, int) else len(got))
            if len(taken) == at:
                how()
        return got

    monkeypatch.setattr(os, name, read)
    return lambda: taken


@pytest.mark.parametrize("call", ["step", "recv"])
def test_ctrl_c_in_the_middle_of_a_long_reply_is_continued_by_the_next_read(
    monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    with ProcVecEnv(_marked(2, size=BIG), context="fork", shared_memory=False) as vec:
        vec.reset()
        taken = _interrupt_read(monkeypatch, "readv", at=3)
        with pytest.raises(KeyboardInterrupt):
            if call == "step":
                vec.step([1, 1])
            else:
                vec.send([1, 1])
                vec.recv()
        assert len(taken()) == 3 and taken()[-1] > 0  # cut short after taking bytes
        if call == "step":
            result: Any = vec.step([0, 1])
            assert [info["steps"] for info in result.infos] == [2, 2]
            assert result.observations[:, :2].tolist() == [[0, 2], [1, 2]]
        else:
            result = vec.recv()
            assert _rows(result) == {rank: ([rank, 1], 1, 1) for rank in range(2)}
        assert not result.observations[:, 2:].any()
        assert len(taken()) > 3  # the rest of the replies came through the same reads


@pytest.mark.usefixtures("sigint")
def test_ctrl_c_as_the_first_read_of_a_reply_takes_its_bytes_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first read of a reply cannot know how much it takes: Ctrl-C is held until its
    bytes are kept, so the next recv() reads on in step (no worker is stopped)."""
    with ProcVecEnv(_marked(2), context="fork", num_workers=2, step_timeout=5) as vec:
        vec.reset()
        taken = _interrupt_read(monkeypatch, "read", at=1, how=_ctrl_c)
        vec.send([1, 1])
        with pytest.raises(KeyboardInterrupt):
            vec.recv()
        assert len(taken()) == 1 and taken()[0] > 0  # it took a reply's bytes
        monkeypatch.undo()
        assert _rows(vec.recv()) == {rank: ([rank, 1], 1, 1) for rank in range(2)}
        vec.send([1, 1])
        assert _rows(vec.recv()) == {rank: ([rank, 2], 2, 2) for rank in range(2)}
        assert vec.step([1, 1]).observations[:, 1].tolist() == [3, 3]


def _raising_handler(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def test_bytes_a_read_took_and_lost_to_ctrl_c_stop_the_worker_instead_of_a_hang(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where Ctrl-C cannot be held (a SIGINT handler of the user's, left alone) and strikes
    once the first read of a reply returned, its bytes are gone and the pipe cannot be read
    in step again."""
    previous = signal.signal(signal.SIGINT, _raising_handler)
    # step_timeout: a reply lost for good would otherwise keep recv() waiting
    try:
        with ProcVecEnv(_marked(2), context="fork", num_workers=2, step_timeout=5) as vec:
            vec.reset()
            _interrupt_read(monkeypatch, "read", at=1, how=_ctrl_c)
            vec.send([1, 1], [0, 1])
            with pytest.raises(KeyboardInterrupt):
                vec.recv()
            monkeypatch.undo()
            for later in (vec.recv, lambda: vec.step([1, 1]), lambda: vec.get_attr("steps")):
                with pytest.raises(sekai.VecEnvWorkerError, match="lost to an interrupt") as e:
                    later()
                assert e.value.exc_type == "EOFError"
    finally:
        signal.signal(signal.SIGINT, previous)


# -- Ctrl-C once a reply is in the channel, the pipe empty ---------------------------------------


def _interrupt_last_readv(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the first ``os.readv`` (in this process) that fills a frame's buffer to its end
    raise KeyboardInterrupt once it returned; returns the sizes the calls took (then -1)."""
    real = os.readv
    taken: list[int] = []
    parent = os.getpid()

    def end(view: memoryview) -> int:
        return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view)) + view.nbytes

    def readv(fd: int, buffers: list[memoryview]) -> int:
        got = real(fd, buffers)
        if os.getpid() == parent and -1 not in taken:
            taken.append(got)
            view = buffers[0]
            if isinstance(view.obj, bytearray) and end(view) == end(memoryview(view.obj)):
                taken.append(-1)
                raise KeyboardInterrupt
        return got

    monkeypatch.setattr(os, "readv", readv)
    return taken


@pytest.mark.timeout(20)
@pytest.mark.parametrize("call", ["step", "recv"])
def test_ctrl_c_after_the_read_that_completes_a_reply_does_not_wait_for_the_empty_pipe(
    monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """The whole reply is in the channel, none in the pipe: the next call takes it at once
    (polling the pipe would wait until step_timeout stops the worker that answered)."""
    with ProcVecEnv(
        _marked(1, size=BIG), context="fork", shared_memory=False, step_timeout=3
    ) as vec:
        vec.reset()
        taken = _interrupt_last_readv(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            if call == "step":
                vec.step([1])
            else:
                vec.send([1])
                vec.recv()
        assert taken[-1] == -1 and len(taken) > 2  # fired on the last of several reads
        monkeypatch.undo()
        start = time.monotonic()
        if call == "step":
            result: Any = vec.step([1])  # the interrupted step's reply is dropped
            assert [info["steps"] for info in result.infos] == [2]
        else:
            result = vec.recv()
            assert _rows(result) == {0: ([0, 1], 1, 1)}
        assert time.monotonic() - start < 1.5
        assert not result.observations[:, 2:].any()


@pytest.mark.timeout(20)
@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
def test_ctrl_c_as_the_pool_starts_keeping_a_reply_does_not_wait_for_the_empty_pipe(
    monkeypatch: pytest.MonkeyPatch, shared_memory: bool | None
) -> None:
    monkeypatch.setattr(Pool, "_keep", interrupted_once(Pool._keep))
    with ProcVecEnv(
        _marked(2), context="fork", num_workers=2, shared_memory=shared_memory, step_timeout=3
    ) as vec:
        vec.reset()
        vec.send([1], [0])
        with pytest.raises(KeyboardInterrupt):
            vec.recv(batch_size=1)
        start = time.monotonic()
        assert _rows(vec.recv(batch_size=1)) == {0: ([0, 1], 1, 1)}
        assert time.monotonic() - start < 1.5
        vec.send([1, 1])
        assert _rows(vec.recv()) == {0: ([0, 2], 2, 2), 1: ([1, 1], 1, 1)}


# -- Ctrl-C while the workers start ----------------------------------------------------------


def test_ctrl_c_in_process_start_reaps_the_worker_it_launched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C lands in ``process.start()`` after the fork, before the pool keeps the worker:
    the worker is killed and reaped there, not left a zombie."""
    launched: list[int] = []
    launch = popen_fork.Popen._launch

    def interrupted(self: Any, process: Any) -> None:
        launch(self, process)
        launched.append(self.pid)
        if process.name.endswith("-1"):
            raise KeyboardInterrupt

    monkeypatch.setattr(popen_fork.Popen, "_launch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ProcVecEnv(_marked(2), context="fork")
    left = []
    for pid in launched:
        try:
            os.waitpid(pid, os.WNOHANG)  # reaps a zombie left behind (or sees it running)
        except ChildProcessError:  # reaped already
            continue
        left.append(pid)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert len(launched) == 2
    assert left == []


def _sleep() -> None:
    time.sleep(60)


def test_ctrl_c_while_process_start_polls_an_earlier_child_leaves_that_child_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``start()`` first polls every earlier child: Ctrl-C in that poll of the user's own
    process (its ``Popen`` in the traceback) must not kill it; nothing was launched."""
    mine = multiprocessing.get_context("fork").Process(target=_sleep, daemon=True)
    mine.start()
    real = os.waitpid
    fired: list[int] = []

    def waitpid(pid: int, flag: int) -> Any:
        if not fired and pid == mine.pid and sys._getframe(2).f_code.co_name == "_cleanup":
            fired.append(pid)
            raise KeyboardInterrupt
        return real(pid, flag)

    monkeypatch.setattr(os, "waitpid", waitpid)
    try:
        with pytest.raises(KeyboardInterrupt):
            ProcVecEnv(_marked(2), context="fork")
        monkeypatch.undo()
        assert fired == [mine.pid]
        time.sleep(0.2)
        assert mine.is_alive(), f"the user's process was ended (exit code {mine.exitcode})"
    finally:
        mine.kill()
        mine.join()


def test_a_worker_whose_parent_gave_up_before_it_started_exits_quietly(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C while the fork server starts a worker: the parent never learned of it and
    unlinked its mailbox; the worker exits without a traceback about it."""
    gone = Mail.create(1, capacity=64)
    gone.release(owner=True)
    ctx = multiprocessing.get_context("fork")
    conn, child = ctx.Pipe()
    lifeline, keep = ctx.Pipe(duplex=False)
    mail = (gone.name, 1, 64)
    process = ctx.Process(target=worker.run, args=(child, lifeline, os.getpid(), False, [], mail))
    process.start()
    process.join(10)
    for end in (conn, child, lifeline, keep):
        end.close()
    assert process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


# -- Ctrl-C while close() waits --------------------------------------------------------------


class HangsInClose(Marked):
    def close(self) -> None:
        time.sleep(3600)


def _ctrl_c_while_close_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C lands while close() waits for the workers to close their sub-envs."""
    collect = Pool._collect

    def interrupted(self: Pool, handles: Any, call: Any, *, kill: bool) -> Any:
        if call.name == "close":
            raise KeyboardInterrupt
        return collect(self, handles, call, kill=kill)

    monkeypatch.setattr(Pool, "_collect", interrupted)


def test_ctrl_c_while_close_waits_stops_the_workers_after_a_grace_not_the_close_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vec = ProcVecEnv([lambda: Marked(0), lambda: HangsInClose(1)], context="fork", close_timeout=30)
    vec.reset()
    pool = vec._pool
    assert pool is not None
    pids = [handle.process.pid for handle in pool.workers]
    _ctrl_c_while_close_waits(monkeypatch)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        vec.close()
    assert time.monotonic() - start < 5.0  # the grace, then terminate(): not 30 s
    assert vec.closed
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # stopped and reaped
            os.kill(pid, 0)


class SpinsInClose(Marked):
    """Its close() ignores SIGTERM and keeps the GIL: only SIGKILL stops its worker."""

    def close(self) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.setswitchinterval(1e6)  # the watchdog thread never runs again
        while True:
            pass


class SleepsInStep(Marked):
    """Creates the file ``started`` when it steps, then sleeps until its worker is killed."""

    def __init__(self, rank: int, started: str) -> None:
        super().__init__(rank)
        self.started = started

    def step(self, action: Any) -> sekai.StepResult[Any]:
        open(self.started, "w").close()
        time.sleep(3600)
        raise AssertionError("unreachable")


def _assert_released(vec: ProcVecEnv, pids: list[int]) -> None:
    """``vec`` holds no worker or shared memory, its workers are reaped, and it is closed."""
    assert (vec._pool, vec._shared) == (None, None)
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # stopped and reaped
            os.kill(pid, 0)
    with pytest.raises(sekai.VecEnvClosed):
        vec.step([0, 0])
    vec.close()  # nothing left: does nothing


def test_a_second_ctrl_c_while_close_stops_the_workers_leaves_the_rest_to_the_next_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vec = ProcVecEnv([lambda: Marked(0), lambda: SpinsInClose(1)], context="fork", close_timeout=30)
    vec.reset()
    assert vec._pool is not None
    pids = [handle.process.pid for handle in vec._pool.workers]
    _ctrl_c_while_close_waits(monkeypatch)
    # The second Ctrl-C, while close() gives them a grace before it terminates them.
    monkeypatch.setattr(processes, "join", interrupted_once(processes.join))
    try:
        with pytest.raises(KeyboardInterrupt):
            vec.close()
        vec.close()  # terminates the spinning worker, kills it, reaps both
        _assert_released(vec, pids)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class _InterruptedTwice(type(threading.RLock())):  # type: ignore[misc]
    """The call lock, whose first two takes by the main thread raise KeyboardInterrupt: close()'s
    wait for the call in progress, then its wait to release the workers it killed."""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if threading.current_thread() is threading.main_thread() and self.left:
            self.left -= 1
            raise KeyboardInterrupt
        return bool(super().acquire(blocking, timeout))

    def __enter__(self) -> bool:
        return self.acquire()


def test_a_second_ctrl_c_while_close_kills_a_call_in_progress_leaves_the_rest_to_the_next_close(
    tmp_path: Any,
) -> None:
    started = str(tmp_path / "started")
    vec = ProcVecEnv([lambda: Marked(0), lambda: SleepsInStep(1, started)], context="fork")
    vec.reset()
    assert vec._pool is not None
    pids = [handle.process.pid for handle in vec._pool.workers]
    vec._calling = lock = _InterruptedTwice()
    lock.left = 2
    got: list[str] = []

    def step() -> None:
        try:
            vec.step([0, 0])
        except Exception as e:
            got.append(type(e).__name__)

    stepper = threading.Thread(target=step)
    stepper.start()
    while not os.path.exists(started):
        time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt):
        vec.close()
    stepper.join(20)
    assert got == ["VecEnvClosed"]
    vec.close()
    _assert_released(vec, pids)
