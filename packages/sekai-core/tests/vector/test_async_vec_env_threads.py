"""AsyncVecEnv used from several threads: its sync shims share one private loop."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import sekai
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
