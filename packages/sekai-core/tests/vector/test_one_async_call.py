"""One async call of a VecEnv at a time on every backend (AsyncCallPending), also where the
async methods run the sync ones (SyncVecEnv, ProcVecEnv, native envs, a wrapper overriding
step()): a second async call, close(), a copy or a pickle meanwhile is refused."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.testing.envs import Drift, DriftVecEnv
from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv, VecEnv, VecWrapper, _async_calls
from sekai.vector.vec_wrapper import VecResultWrapper

PENDING = "A previous async call is still pending."


def _once() -> Any:
    """The observations of one step of the action 1 after reset(seed=0), undisturbed."""
    with SyncVecEnv([Drift, Drift]) as vec:
        vec.reset(seed=0)
        return vec.step(np.array([1, 1])).observations


class _OwnStep(VecWrapper):
    """A wrapper with its own step(): its async_step runs that step (the routing rule)."""

    def step(self, actions: Any) -> Any:
        return self.venv.step(actions)


class _Gated(Drift):
    """Steps on when ``release`` is set, after setting ``entered``: a step held in progress."""

    entered = threading.Event()
    release = threading.Event()

    def step(self, action: Any) -> Any:
        _Gated.entered.set()
        assert _Gated.release.wait(10)
        return super().step(action)


@contextlib.contextmanager
def _async_step_held(vec: VecEnv) -> Iterator[list[Any]]:
    """An ``async_step`` of ``vec`` awaited in another thread, held inside sub-env 0's step
    (a ``_Gated``) until the block ends; yields the list its result is put in."""
    _Gated.entered.clear()
    _Gated.release.clear()
    results: list[Any] = []
    first = threading.Thread(
        target=lambda: results.append(asyncio.run(vec.async_step(np.array([1, 1]))))
    )
    first.start()
    try:
        assert _Gated.entered.wait(10)
        yield results
    finally:
        _Gated.release.set()
        first.join(10)


def _gated_sync() -> VecEnv:
    return SyncVecEnv([_Gated, Drift])


def _gated_wrapper() -> VecEnv:
    return _OwnStep(SyncVecEnv([_Gated, Drift]))


@pytest.mark.parametrize("make", [_gated_sync, _gated_wrapper], ids=["sync", "wrapper"])
@pytest.mark.parametrize(
    "second",
    [
        lambda vec: asyncio.run(vec.async_step(np.array([1, 1]))),
        lambda vec: asyncio.run(vec.async_reset(seed=1)),
        copy.deepcopy,
        lambda vec: vec.close(),
    ],
    ids=["async_step", "async_reset", "deepcopy", "close"],
)
def test_a_second_async_call_from_another_thread_is_refused_while_one_runs(
    make: Callable[[], VecEnv], second: Callable[[VecEnv], Any]
) -> None:
    vec = make()
    vec.reset(seed=0)
    with _async_step_held(vec) as results, pytest.raises(sekai.AsyncCallPending):
        second(vec)
    np.testing.assert_array_equal(results[0].observations, _once())  # stepped once
    asyncio.run(vec.async_step(np.array([0, 0])))  # the call is over: the next one runs
    vec.close()


def test_a_wrappers_refused_async_call_leaves_no_wrapper_inside_it_held_by_its_thread() -> None:
    base = SyncVecEnv([_Gated, Drift])
    middle = _OwnStep(base)
    outer = _OwnStep(middle)
    outer.reset(seed=0)
    with _async_step_held(base), pytest.raises(sekai.AsyncCallPending):
        asyncio.run(outer.async_step(np.array([1, 1])))  # middle is claimed, then base refuses
    # Neither wrapper stays held by this thread: another thread's async call of each runs.
    done: list[Any] = []

    def other_thread() -> None:
        done.append(asyncio.run(middle.async_step(np.array([0, 0]))))
        done.append(asyncio.run(outer.async_step(np.array([0, 0]))))

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join(10)
    assert len(done) == 2
    outer.close()


class _Closer(Drift):
    """Closes (or copies) the VecEnv stepping it, from inside its step."""

    vec: VecEnv | None = None
    seen: list[BaseException] = []  # noqa: RUF012

    def step(self, action: Any) -> Any:
        assert _Closer.vec is not None
        try:
            _Closer.vec.close()
        except sekai.AsyncCallPending as error:
            _Closer.seen.append(error)
        return super().step(action)


def test_close_during_a_sync_vec_envs_async_step_is_refused_and_leaves_it_open() -> None:
    vec = _Closer.vec = SyncVecEnv([_Closer, Drift])
    _Closer.seen.clear()
    vec.reset(seed=0)
    result = asyncio.run(vec.async_step(np.array([1, 1])))
    assert len(_Closer.seen) == 1 and PENDING in str(_Closer.seen[0])
    assert not vec.closed
    np.testing.assert_array_equal(result.observations, _once())
    vec.step(np.array([1, 1]))  # a sync step is no async call: close() inside it closes
    assert len(_Closer.seen) == 1 and vec.closed


@pytest.mark.parametrize("backend", ["native", "proc"])
def test_the_routed_async_calls_of_native_and_proc_envs_clear_their_mark(backend: str) -> None:
    # Each call is one async call: the flag set for it is cleared, after an error too.
    vec: VecEnv = DriftVecEnv(2) if backend == "native" else ProcVecEnv([Drift, Drift])
    with vec:
        asyncio.run(vec.async_reset(seed=0))
        with pytest.raises(ValueError, match="actions must have shape"):
            asyncio.run(vec.async_step(np.array([1, 1, 1])))
        assert not vec._async_pending
        asyncio.run(vec.async_step(np.array([1, 1])))
        if backend == "native":  # ProcVecEnv refuses every copy: it owns its workers
            copy.deepcopy(vec).close()  # the mark is cleared: the env copies again


class _GatedReset(Drift):
    """Its reset() waits for ``release`` once ``armed``, after setting ``entered``."""

    armed = False
    entered = threading.Event()
    release = threading.Event()

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if _GatedReset.armed:
            _GatedReset.entered.set()
            assert _GatedReset.release.wait(10)
        return super().reset(seed=seed, options=options)


class _OwnReset(VecWrapper):
    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return self.venv.reset(seed=seed, options=options)


class _ResultOwnStep(VecResultWrapper):
    def step(self, actions: Any) -> Any:
        return self.venv.step(actions)


class _ResultOwnReset(VecResultWrapper):
    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return self.venv.reset(seed=seed, options=options)


@pytest.mark.parametrize(
    ("wrapper", "running", "second"),
    [
        (_OwnReset, "reset", "step"),  # VecWrapper.async_step passes inward: it checks first
        (_ResultOwnStep, "step", "reset"),  # VecResultWrapper.async_reset
        (_ResultOwnReset, "reset", "step"),  # VecResultWrapper.async_step
    ],
)
def test_a_wrappers_own_async_call_refuses_the_other_one_passed_inward(
    wrapper: Any, running: str, second: str
) -> None:
    gate = _GatedReset if running == "reset" else _Gated
    gate.entered.clear()
    gate.release.clear()
    vec = wrapper(SyncVecEnv([gate, Drift]))
    vec.reset(seed=0)
    calls = {
        "step": lambda: vec.async_step(np.array([1, 1])),
        "reset": lambda: vec.async_reset(seed=1),
    }
    _GatedReset.armed = running == "reset"
    first = threading.Thread(target=lambda: asyncio.run(calls[running]()))
    first.start()
    try:
        assert gate.entered.wait(10)
        with pytest.raises(sekai.AsyncCallPending):
            asyncio.run(calls[second]())
        with pytest.raises(sekai.AsyncCallPending):
            vec.close()
    finally:
        _GatedReset.armed = False
        gate.release.set()
        first.join(10)
    vec.close()
    assert vec.closed


class _GatedDriftVecEnv(DriftVecEnv):
    """A native env whose step is held in progress as ``_Gated``'s is."""

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        _Gated.entered.set()
        assert _Gated.release.wait(10)
        return super()._step(actions)


def _gated_native() -> VecEnv:
    return _GatedDriftVecEnv(2)


ELSEWHERE = (
    "{name} was called from another thread while a reset() or step() of it, or their async "
    "versions, runs: the call would reach its sub-envs in the middle of that one. Let that "
    "call return first (serialise the threads' calls with a lock), or give each thread its own "
    "VecEnv."
)


_SYNC_CALLS: dict[str, Callable[[VecEnv], Any]] = {
    "step": lambda vec: vec.step(np.array([1, 1])),
    "reset": lambda vec: vec.reset(seed=1),
    "get_attr": lambda vec: vec.get_attr("x"),
    "set_attr": lambda vec: vec.set_attr("x", 0.0),
    "call": lambda vec: vec.call("reset"),
}


@pytest.mark.parametrize(
    ("make", "name", "calls"),
    [
        (_gated_sync, "SyncVecEnv", list(_SYNC_CALLS)),
        (_gated_wrapper, "SyncVecEnv", list(_SYNC_CALLS)),
        # Not a shim call running: the shims' own refusal does not apply.
        (lambda: AsyncVecEnv([_Gated, Drift]), "AsyncVecEnv", list(_SYNC_CALLS)),
        (_gated_native, "_GatedDriftVecEnv", ["step", "reset"]),  # no sub-env attributes
    ],
    ids=["sync", "wrapper", "async", "native"],
)
def test_sync_calls_from_another_thread_during_an_async_call_are_refused_and_change_nothing(
    make: Callable[[], VecEnv], name: str, calls: list[str]
) -> None:
    # The async methods run the sync ones in the awaiting thread: nothing else kept another
    # thread's sync call from stepping, resetting or reading the sub-envs in the middle.
    vec = make()
    vec.reset(seed=0)
    with _async_step_held(vec) as results:
        for call in calls:
            with pytest.raises(sekai.AsyncCallPending) as caught:
                _SYNC_CALLS[call](vec)
            assert str(caught.value) == ELSEWHERE.format(name=name), call
    if not isinstance(vec, DriftVecEnv):  # stepped once, by the async call alone
        np.testing.assert_array_equal(results[0].observations, _once())
    else:
        reference = DriftVecEnv(2)
        reference.reset(seed=0)
        np.testing.assert_array_equal(
            results[0].observations, reference.step(np.array([1, 1])).observations
        )
    vec.step(np.array([1, 1]))  # the call is over: this thread's calls run again
    vec.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
# Python 3.12+ warns that a multi-threaded process forks; this test forks one on purpose.
@pytest.mark.filterwarnings("ignore:.*use of fork:DeprecationWarning")
def test_a_child_forked_while_another_thread_begins_an_async_call_runs_async_calls() -> None:
    # At the fork, another thread holds the lock that makes an async call's check-and-set one
    # step. That thread is not in the child: the child's first async call must not wait on it.
    vec = SyncVecEnv([Drift, Drift])
    vec.reset(seed=0)
    held, release = threading.Event(), threading.Event()

    def begin() -> None:
        with _async_calls._BEGIN_ASYNC:  # as a thread between the check and the set
            held.set()
            release.wait(10)

    beginning = threading.Thread(target=begin)
    beginning.start()
    try:
        assert held.wait(10)
        pid = os.fork()
        if pid == 0:
            # A hang in the child ends it with exit code 3 instead of hanging the suite.
            signal.signal(signal.SIGALRM, lambda *_: os._exit(3))
            signal.alarm(5)
            code = 1
            try:
                result = asyncio.run(vec.async_step(np.array([1, 1])))
                code = 0 if np.array_equal(result.observations, _once()) else 2
            finally:
                os._exit(code)
    finally:
        release.set()
        beginning.join(10)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # 3: the child hung on the lock
    vec.step(np.array([1, 1]))  # the parent's lock was released by its thread
    vec.close()


class _CopiesInside(VecWrapper):
    """A wrapper whose own step() copies and reads the env it wraps (a snapshot)."""

    snapshots: list[VecEnv] = []  # noqa: RUF012

    def step(self, actions: Any) -> Any:
        assert not self.venv._async_pending  # the wrapper's async call is no call of the env's
        _CopiesInside.snapshots.append(copy.deepcopy(self.venv))
        return self.venv.step(actions)


@pytest.mark.parametrize("inner", ["sync", "native"])
def test_a_wrappers_own_async_call_may_copy_the_env_it_wraps_from_its_step(inner: str) -> None:
    venv: VecEnv = SyncVecEnv([Drift, Drift]) if inner == "sync" else DriftVecEnv(2)
    vec = _CopiesInside(venv)
    _CopiesInside.snapshots.clear()
    vec.reset(seed=0)
    result = asyncio.run(vec.async_step(np.array([1, 1])))
    assert len(_CopiesInside.snapshots) == 1
    # The copy was taken before the step: stepping it gives the step's own result.
    snapshot = _CopiesInside.snapshots[0]
    np.testing.assert_array_equal(snapshot.step(np.array([1, 1])).observations, result.observations)
    assert not any(env._async_thread for env in (vec, venv))  # released after the call
    snapshot.close()
    vec.close()


def test_a_copy_taken_inside_a_wrappers_async_call_in_another_thread_is_free_to_use() -> None:
    venv = SyncVecEnv([Drift, Drift])
    vec = _CopiesInside(venv)
    _CopiesInside.snapshots.clear()
    vec.reset(seed=0)
    stepper = threading.Thread(target=lambda: asyncio.run(vec.async_step(np.array([1, 1]))))
    stepper.start()
    stepper.join(10)
    (snapshot,) = _CopiesInside.snapshots
    assert snapshot.step(np.array([1, 1])).observations.shape == (2, 1)  # not refused here
    snapshot.close()
    vec.close()


def test_two_wrappers_of_one_env_cannot_run_async_calls_on_it_from_two_threads_at_once() -> None:
    inner = SyncVecEnv([_Gated, Drift])
    first_wrapper, second_wrapper = _OwnStep(inner), _OwnStep(inner)
    inner.reset(seed=0)
    with _async_step_held(first_wrapper):
        with pytest.raises(sekai.AsyncCallPending) as caught:
            asyncio.run(second_wrapper.async_step(np.array([1, 1])))
        assert str(caught.value) == ELSEWHERE.format(name="SyncVecEnv")
    # The refused call left nothing behind: the second wrapper's async calls run now.
    assert not second_wrapper._async_pending and not inner._async_thread
    asyncio.run(second_wrapper.async_step(np.array([0, 0])))
    inner.close()


def test_calls_from_another_thread_during_an_async_vec_envs_sync_step_are_refused() -> None:
    # A sync step() of an AsyncVecEnv runs an async call on its private loop in this thread.
    vec = AsyncVecEnv([_Gated, Drift])
    vec.reset(seed=0)
    _Gated.entered.clear()
    _Gated.release.clear()
    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(vec.step(np.array([1, 1]))))
    first.start()
    try:
        assert _Gated.entered.wait(10)
        for call in ["get_attr", "set_attr", "call"]:
            with pytest.raises(sekai.AsyncCallPending) as caught:
                _SYNC_CALLS[call](vec)
            assert str(caught.value) == ELSEWHERE.format(name="AsyncVecEnv"), call
    finally:
        _Gated.release.set()
        first.join(10)
    np.testing.assert_array_equal(results[0].observations, _once())
    vec.close()


class _Slow(Drift):
    def step(self, action: Any) -> Any:
        time.sleep(0.5)
        return super().step(action)


def test_a_proc_vec_envs_own_async_call_waits_for_a_wrappers_in_another_thread() -> None:
    # Its calls take turns under its call lock: the wrapper's claim on it refuses nothing.
    inner = ProcVecEnv([_Slow, Drift], context="fork")  # _Slow lives in this test module
    vec = _OwnStep(inner)
    inner.reset(seed=0)
    results: list[Any] = []
    first = threading.Thread(
        target=lambda: results.append(asyncio.run(vec.async_step(np.array([1, 1]))))
    )
    first.start()
    try:
        deadline = time.monotonic() + 10
        while not inner._async_thread and time.monotonic() < deadline:
            time.sleep(0.01)
        assert inner._async_thread  # the wrapper's call holds its claim
        second = asyncio.run(inner.async_step(np.array([0, 0])))
    finally:
        first.join(10)
    assert len(results) == 1 and second.observations.shape == (2, 1)
    inner.close()
