"""AsyncVecEnv's sync shims under Ctrl-C: a SIGINT anywhere in a call ends it cleanly.

The SIGINTs are placed deterministically: a sub-env raises one (``signal.raise_signal``), or a
trace function hands one to the SIGINT handler at a chosen trace event, as Python does with a
signal that arrives while that code runs. The sweeps over every event of a call run in a
subprocess with a timeout, so that a call that never ends fails the test instead of hanging.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv

_ACTIONS = np.array([0, 0])


class Counting(sekai.Env):  # type: ignore[type-arg]
    """Counts its finished steps; ``async_step`` awaits a few loop turns first. A sub-env
    made with ``ctrl_c`` sends itself that many SIGINTs, at the start of its first step."""

    def __init__(self, ctrl_c: int = 0, turns: int = 3) -> None:
        self.observation_space = sekai.Box(0.0, 100.0, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.ctrl_c, self.turns = ctrl_c, turns
        self.finished = 0
        self.closed_by_vec = False

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.finished += 1
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 1.0, False, False, {})

    async def async_step(self, action: Any) -> sekai.StepResult[Any]:
        for _ in range(self.ctrl_c):
            self.ctrl_c -= 1
            signal.raise_signal(signal.SIGINT)
        for _ in range(self.turns):
            await asyncio.sleep(0)
        return self.step(action)

    def close(self) -> None:
        self.closed_by_vec = True


@pytest.fixture
def python_handler() -> Iterator[None]:
    """Python's own SIGINT handler, as in a script (the shims stand in for it during a call)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _no_stray_interrupt(test: Callable[..., None]) -> Callable[..., None]:
    """A KeyboardInterrupt escaping the test fails it, instead of stopping the pytest run."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            test(*args, **kwargs)
        except KeyboardInterrupt:
            pytest.fail("KeyboardInterrupt escaped where the test expects none")

    return run


def _counting(*subs: Counting) -> AsyncVecEnv:
    vec = AsyncVecEnv([lambda sub=sub: sub for sub in subs])  # type: ignore[misc]
    vec.reset(seed=0)
    return vec


@_no_stray_interrupt
def test_ctrl_c_in_a_sub_env_cancels_the_step_at_its_next_await(python_handler: None) -> None:
    quick, interrupted = Counting(turns=0), Counting(ctrl_c=1)
    vec = _counting(quick, interrupted)
    with pytest.raises(KeyboardInterrupt) as caught:
        vec.step(_ACTIONS)
    assert (quick.finished, interrupted.finished) == (1, 0)  # cancelled, not left to resume
    # The record of the sub-envs that stepped (rule 9) goes with the KeyboardInterrupt raised.
    partial = vec._partial_step(caught.value)
    assert partial is not None
    assert partial.stepped.tolist() == [True, False]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert vec.step(_ACTIONS).rewards.tolist() == [1.0, 1.0]
    vec.close()


@_no_stray_interrupt
def test_a_ctrl_c_after_the_sub_envs_stepped_still_raises_keyboard_interrupt(
    python_handler: None,
) -> None:
    late = Counting(ctrl_c=1, turns=0)  # the SIGINT comes as its step, the last one, ends
    vec = _counting(Counting(turns=0), late)
    with pytest.raises(KeyboardInterrupt):
        vec.step(_ACTIONS)
    assert late.finished == 1
    assert vec.step(_ACTIONS).rewards.tolist() == [1.0, 1.0]
    vec.close()


def _no_asyncio_reports(caplog: pytest.LogCaptureFixture) -> None:
    gc.collect()  # a task dropped pending would say so now
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


@_no_stray_interrupt
def test_a_second_ctrl_c_gives_up_on_a_sub_env_that_does_not_return(
    python_handler: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Its first SIGINT is deferred to the loop's next turn, which never comes: the second one
    raises KeyboardInterrupt in the sub-env's own code."""
    stuck = Counting(ctrl_c=2)
    other = Counting()
    vec = _counting(other, stuck)
    with pytest.raises(KeyboardInterrupt):
        vec.step(_ACTIONS)
    with pytest.raises(RuntimeError, match=r"close\(\) this AsyncVecEnv and make a new one"):
        vec.step(_ACTIONS)
    vec.close()
    assert stuck.closed_by_vec and other.closed_by_vec
    assert other.finished == 0  # its pending step was dropped, not resumed
    _no_asyncio_reports(caplog)


class Deaf(Counting):
    """Its step never ends: it ignores cancellation; ``cleaned`` once its coroutine is
    closed. It asks for two SIGINTs from loop callbacks, so they land in asyncio's code."""

    def __init__(self) -> None:
        super().__init__()
        self.cleaned = False

    async def async_step(self, action: Any) -> sekai.StepResult[Any]:
        loop = asyncio.get_running_loop()
        loop.call_soon(signal.raise_signal, signal.SIGINT)
        loop.call_soon(signal.raise_signal, signal.SIGINT)
        try:
            while True:
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    continue
        finally:
            self.cleaned = True


@_no_stray_interrupt
def test_a_second_ctrl_c_in_asyncio_code_raises_at_the_loops_next_turn(
    python_handler: None, caplog: pytest.LogCaptureFixture
) -> None:
    deaf = Deaf()
    vec = _counting(Counting(), deaf)
    with pytest.raises(KeyboardInterrupt):
        vec.step(_ACTIONS)
    assert deaf.cleaned  # the dropped call's finally block ran
    with pytest.raises(RuntimeError, match=r"close\(\) this AsyncVecEnv"):
        vec.reset()
    vec.close()
    _no_asyncio_reports(caplog)


@_no_stray_interrupt
def test_a_sigint_handler_of_the_users_is_left_alone() -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        vec = _counting(Counting(), Counting(ctrl_c=1))
        assert vec.step(_ACTIONS).rewards.tolist() == [1.0, 1.0]  # not cancelled
        assert received == [signal.SIGINT]
        vec.close()
    finally:
        signal.signal(signal.SIGINT, previous)


_SWEEP = '''
import asyncio, signal, sys
import numpy as np
import sekai
from sekai.vector import AsyncVecEnv

# Python's own handler even when started with SIGINT ignored (from a background shell job).
signal.signal(signal.SIGINT, signal.default_int_handler)


class Counting(sekai.Env):
    def __init__(self):
        self.observation_space = sekai.Box(0.0, 100.0, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.finished = 0
        self.closed_by_vec = False

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action):
        self.finished += 1
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 1.0, False, False, {})

    async def async_reset(self, *, seed=None, options=None):
        await asyncio.sleep(0)
        return self.reset(seed=seed, options=options)

    async def async_step(self, action):
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return self.step(action)

    def close(self):
        self.closed_by_vec = True


def ctrl_c_at(points, call, calls_only):
    """Run call() with a SIGINT handed to the SIGINT handler at the trace events numbered in
    points (function starts only, where Python checks for signals, with calls_only): whether
    it raised KeyboardInterrupt, and the number of events seen."""
    seen = 0

    def tracer(frame, event, arg):
        nonlocal seen
        if calls_only and event != "call":
            return tracer
        seen += 1
        if seen in points:
            signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)
        return tracer

    sys.settrace(tracer)
    try:
        call()
    except KeyboardInterrupt:
        return True, seen
    finally:
        sys.settrace(None)
    return False, seen


def new_vec():
    vec = AsyncVecEnv([Counting, Counting])
    vec.reset(seed=0)
    return vec


def once(method):
    """One Ctrl-C at each event of a call: it raises KeyboardInterrupt, the env stays usable."""
    vec = new_vec()
    call = {"step": lambda: vec.step(np.array([0, 0])), "reset": lambda: vec.reset()}[method]
    point = 0
    while True:
        point += 1
        before = [sub.finished for sub in vec.envs]
        raised, seen = ctrl_c_at({point}, call, calls_only=False)
        if seen < point:
            break
        assert raised, point
        assert not vec._shim_lock.locked() and not vec._async_pending, point
        assert not asyncio.all_tasks(vec._loop), point
        if method == "reset":  # a reset cut short asks for another before step()
            vec.reset()
        assert vec.step(np.array([0, 0])).rewards.tolist() == [1.0, 1.0], point
        for sub, count in zip(vec.envs, before):
            assert sub.finished - count in (1, 2), point  # nothing resumed later
    vec.close()
    print(method, point - 1)


def twice(gap):
    """Two Ctrl-Cs: KeyboardInterrupt; the env is usable, or says to close it; close() works."""
    outcomes = {"usable": 0, "dropped": 0}
    point = 0
    while True:
        point += 1
        vec = new_vec()
        raised, seen = ctrl_c_at({point, point + gap}, lambda: vec.step(np.array([0, 0])), True)
        if seen < point:
            break
        assert raised, point
        try:
            vec.step(np.array([0, 0]))
            outcomes["usable"] += 1
        except RuntimeError as error:
            assert "close() this AsyncVecEnv" in str(error), (point, error)
            outcomes["dropped"] += 1
        vec.close()
        assert all(sub.closed_by_vec for sub in vec.envs), point
    print(gap, outcomes["usable"], outcomes["dropped"])


for method in ("step", "reset"):
    once(method)
for gap in (1, 10):
    twice(gap)
'''


def test_ctrl_c_at_any_point_of_a_call_never_hangs_and_leaves_no_noise(tmp_path: Path) -> None:
    script = tmp_path / "sweep.py"
    script.write_text(_SWEEP)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no "Task was destroyed", no coroutine never awaited
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [line[0] for line in lines] == ["step", "reset", "1", "10"]
    assert all(int(points) > 100 for _, points in lines[:2])  # the sweeps covered the calls
    for _, usable, dropped in lines[2:]:  # both endings of a second Ctrl-C were reached
        assert int(usable) > 0 and int(dropped) > 0
