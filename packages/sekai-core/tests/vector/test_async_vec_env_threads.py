"""AsyncVecEnv used from several threads: its sync shims share one private loop."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.testing.envs import Drift
from sekai.vector import AsyncVecEnv


class Blocking(sekai.Env):  # type: ignore[type-arg]
    """Its async step tells ``started`` and then holds its loop until ``release`` is set."""

    def __init__(self, started: threading.Event, release: threading.Event) -> None:
        self.observation_space = sekai.Box(0.0, np.inf, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.started = started
        self.release = release
        self.steps = 0

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    async def async_step(self, action: Any) -> Any:
        self.started.set()
        assert self.release.wait(30)  # blocks the private loop in the stepping thread
        self.steps += 1
        return sekai.StepResult(np.ones(1, np.float32), 1.0, False, False, {})

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        raise NotImplementedError

    def step(self, action: Any) -> Any:
        raise NotImplementedError


def test_a_sync_shim_call_while_another_threads_runs_raises_async_call_pending() -> None:
    started, release = threading.Event(), threading.Event()
    vec = AsyncVecEnv([lambda: Blocking(started, release)])
    vec.reset(seed=0)
    results: list[Any] = []
    stepper = threading.Thread(target=lambda: results.append(vec.step(np.array([1]))))
    stepper.start()
    try:
        assert started.wait(30)
        # Refused before the other thread's loop is touched (not "This event loop is already
        # running"), as overlapping async calls are.
        for method, call in [
            ("step", lambda: vec.step(np.array([1]))),
            ("reset", lambda: vec.reset(seed=1)),
            ("close", vec.close),  # its sub-envs would close under the running step
        ]:
            with pytest.raises(sekai.AsyncCallPending) as caught:
                call()
            # This thread made no async call: nothing of its own to await.
            assert str(caught.value) == (
                f"AsyncVecEnv.{method}() was called while another thread's step() or reset() "
                "of it runs on its private event loop: its sync calls run one at a time. Wait "
                "for that call (serialise them with a lock), or give each thread its own "
                "AsyncVecEnv."
            )
    finally:
        release.set()
        stepper.join(30)
    assert [result.rewards.tolist() for result in results] == [[1.0]]
    assert vec.envs[0].steps == 1  # the refused calls stepped nothing
    assert vec.step(np.array([0])).rewards.tolist() == [1.0]  # usable again
    vec.close()
    assert vec.closed


_SEKAI = os.path.dirname(sekai.__file__)


def _offer_the_gil(frame: Any, event: str, arg: Any) -> Any:
    if event == "line":
        time.sleep(0)  # another thread may run here, as it may on a free-threaded build
    return _offer_the_gil


def _switch_threads_at_every_line_of_sekai() -> None:
    """Trace the calling thread so that it lets other threads run at each line of sekai's code.

    Without it, CPython switches threads only at calls and loops: a check on one line and the
    store on the next would never interleave, as they do where threads run in parallel.
    """
    sys.settrace(
        lambda frame, event, arg: (
            _offer_the_gil if frame.f_code.co_filename.startswith(_SEKAI) else None
        )
    )


class _Round:
    """One round of the race: its async step holds its caller's loop until every racer tried."""

    def __init__(self, racers: int) -> None:
        self.racers = racers
        self.lock = threading.Lock()
        self.tried = 0
        self.winners = 0
        self.everyone_tried = threading.Event()

    def tried_to_begin(self, won: bool) -> None:
        with self.lock:
            self.tried += 1
            self.winners += won
            if self.tried == self.racers:
                self.everyone_tried.set()
        assert self.everyone_tried.wait(30), "a racer never tried"


class Held(sekai.Env):  # type: ignore[type-arg]
    observation_space = sekai.Discrete(2)
    action_space = sekai.Discrete(2)

    def __init__(self, rounds: list[_Round]) -> None:
        self.rounds = rounds

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return sekai.ResetResult(0, {})

    async def async_step(self, action: Any) -> Any:
        self.rounds[-1].tried_to_begin(won=True)
        return sekai.StepResult(0, 0.0, False, False, {})

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        raise NotImplementedError

    def step(self, action: Any) -> Any:
        raise NotImplementedError


def test_async_steps_begun_at_once_on_the_loops_of_several_threads_let_exactly_one_run() -> None:
    racers, rounds = 4, 50
    played = [_Round(racers)]
    vec = AsyncVecEnv([lambda: Held(played)])
    vec.reset(seed=0)
    # The barrier's action starts the next round once every racer is done with this one.
    start = threading.Barrier(racers, timeout=30)
    done = threading.Barrier(racers, action=lambda: played.append(_Round(racers)), timeout=30)
    errors: list[BaseException] = []

    def race() -> None:
        loop = asyncio.new_event_loop()
        _switch_threads_at_every_line_of_sekai()
        try:
            for _ in range(rounds):
                start.wait()
                try:
                    loop.run_until_complete(vec.async_step(np.array([0])))
                except sekai.AsyncCallPending:
                    played[-1].tried_to_begin(won=False)
                done.wait()
        except BaseException as exc:
            errors.append(exc)
            start.abort()
            done.abort()
        finally:
            sys.settrace(None)
            loop.close()

    threads = [threading.Thread(target=race, daemon=True) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads) and errors == []
    assert [r.winners for r in played[:-1]] == [1] * rounds
    vec.close()


class _CallsBack(Drift):
    """Its step calls ``callback`` (set by the test): code run inside the VecEnv's own call,
    as a signal handler or a callback would be."""

    callback: Any = None

    def step(self, action: Any) -> Any:
        if _CallsBack.callback is not None:
            _CallsBack.callback()
        return super().step(action)


@pytest.mark.parametrize("method", ["close", "step", "reset"])
def test_a_call_inside_its_own_sync_call_is_refused_naming_that_call_not_a_thread(
    method: str,
) -> None:
    vec = AsyncVecEnv([_CallsBack, _CallsBack])
    vec.reset(seed=0)
    calls = {"close": vec.close, "step": lambda: vec.step([0, 0]), "reset": vec.reset}
    refused: list[str] = []

    def callback() -> None:
        try:
            calls[method]()
        except sekai.AsyncCallPending as error:
            refused.append(str(error))

    _CallsBack.callback = callback
    try:
        assert vec.step([1, 1]).observations.shape == (2, 1)  # the step itself went on
    finally:
        _CallsBack.callback = None
    assert (
        refused
        == [
            f"AsyncVecEnv.{method}() was called inside its own step() or reset() (from a signal "
            "handler or a callback run by that call): its sync calls run one at a time. Call it "
            "once that call has returned."
        ]
        * 2
    )
    assert not vec.closed
    vec.close()
