"""AsyncVecEnv: concurrency, the sync shims, AsyncCallPending, errors and the private loop."""

from __future__ import annotations

import asyncio
import copy
import gc
import os
import pickle
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, SyncVecEnv, VecEnv, async_vec_env


class Venue(sekai.Env):  # type: ignore[type-arg]
    """An async-native env that logs when each step starts and ends (it yields in between)."""

    def __init__(self, index: int, log: list[tuple[str, int]], fail: bool = False) -> None:
        self.observation_space = sekai.Box(0.0, np.inf, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.index = index
        self.log = log
        self.fail = fail
        self.steps = 0

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        self.log.append(("reset", self.index))
        await asyncio.sleep(0)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    async def async_step(self, action: Any) -> Any:
        self.log.append(("start", self.index))
        for _ in range(3 - self.index):  # later sub-envs finish first
            await asyncio.sleep(0)
        if self.fail:
            raise ValueError(f"sub-env {self.index} failed")
        self.steps += 1
        self.log.append(("end", self.index))
        return sekai.StepResult(np.ones(1, np.float32), 1.0, False, False, {})

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return asyncio.run(self.async_reset(seed=seed, options=options))

    def step(self, action: Any) -> Any:
        return asyncio.run(self.async_step(action))


def _venues(n: int, log: list[tuple[str, int]], failing: tuple[int, ...] = ()) -> AsyncVecEnv:
    return AsyncVecEnv([lambda i=i: Venue(i, log, i in failing) for i in range(n)])


def test_async_step_runs_the_sub_envs_concurrently() -> None:
    log: list[tuple[str, int]] = []

    async def go() -> Any:
        vec = _venues(3, log)
        await vec.async_reset(seed=0)
        log.clear()
        result = await vec.async_step(np.array([1, 1, 1]))
        vec.close()
        return result

    result = asyncio.run(go())
    assert [kind for kind, _ in log[:3]] == ["start"] * 3  # all started before any ended
    assert log[3:] == [("end", 2), ("end", 1), ("end", 0)]
    assert result.rewards.tolist() == [1.0, 1.0, 1.0]


def test_sync_shims_run_on_the_private_loop_and_close_closes_it() -> None:
    log: list[tuple[str, int]] = []
    vec = _venues(4, log)
    assert vec.reset(seed=0).observations.shape == (4, 1)
    assert vec.step([0, 1, 0, 1]).observations.shape == (4, 1)
    loop = vec._loop
    assert loop is not None and not loop.is_closed()
    vec.close()
    assert loop.is_closed() and vec.closed


class Feed(Venue):
    """Starts a background reader on its first reset, as a market-data feed would."""

    cleaned: list[int] = []  # noqa: RUF012

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        self.reader = asyncio.get_running_loop().create_task(self._read())
        return await super().async_reset(seed=seed, options=options)

    async def _read(self) -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0)  # `await websocket.close()`: only a loop can run it
            Feed.cleaned.append(self.index)


COPIERS = {
    "pickle": lambda vec: pickle.loads(pickle.dumps(vec)),
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


@pytest.mark.parametrize("how", list(COPIERS))
def test_a_copy_has_its_own_private_loop_and_closing_it_leaves_the_original_running(
    how: str,
) -> None:
    vec = _venues(2, [])
    vec.reset()
    vec.step([1, 1])
    twin = COPIERS[how](vec)
    assert twin.step([1, 1]).rewards.tolist() == [1.0, 1.0]
    assert twin._loop is not vec._loop
    twin.close()
    assert vec.step([1, 1]).rewards.tolist() == [1.0, 1.0] and not vec.closed
    # Deep copies and unpickled ones step their own sub-envs; a shallow copy shares them.
    assert vec.get_attr("steps") == ([3, 3] if how == "copy" else [2, 2])
    loop = vec._loop
    vec.close()
    assert loop is not None and loop.is_closed()


@pytest.mark.parametrize("how", list(COPIERS))
def test_a_closed_async_vec_env_copies_as_closed(how: str) -> None:
    vec = _venues(1, [])
    vec.reset()
    vec.close()
    twin = COPIERS[how](vec)
    assert twin.closed
    with pytest.raises(sekai.VecEnvClosed):
        twin.step([0])


def test_close_cancels_the_tasks_sub_envs_left_on_the_private_loop() -> None:
    Feed.cleaned.clear()
    vec = AsyncVecEnv([lambda i=i: Feed(i, []) for i in range(2)])
    vec.reset(seed=0)
    vec.close()
    assert sorted(Feed.cleaned) == [0, 1]  # each reader's finally ran, as under asyncio.run


class Streamer(Venue):
    """Keeps an async generator (a quote stream) suspended inside its try block."""

    closed_streams: list[int] = []  # noqa: RUF012

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        self.stream = self._quotes()
        await self.stream.__anext__()
        return await super().async_reset(seed=seed, options=options)

    async def _quotes(self) -> Any:
        try:
            while True:
                yield 1.0
        finally:
            Streamer.closed_streams.append(self.index)


def test_close_finalises_the_async_generators_sub_envs_left_on_the_private_loop() -> None:
    Streamer.closed_streams.clear()
    vec = AsyncVecEnv([lambda i=i: Streamer(i, []) for i in range(2)])
    vec.reset(seed=0)
    vec.close()
    assert sorted(Streamer.closed_streams) == [0, 1]  # as asyncio.run finalises them


def test_collected_without_close_it_cancels_the_tasks_on_its_loop_and_leaves_the_sub_envs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Feed.cleaned.clear()
    closed: list[int] = []
    monkeypatch.setattr(Feed, "close", lambda self: closed.append(self.index))
    vec = AsyncVecEnv([lambda i=i: Feed(i, []) for i in range(2)])
    vec.reset(seed=0)
    feeds, loop = vec.envs, vec._loop
    del vec
    gc.collect()
    assert loop is not None and loop.is_closed()
    # Cancelled and run to their end, not destroyed pending when collected.
    assert [feed.reader.cancelled() for feed in feeds] == [True, True]
    assert sorted(Feed.cleaned) == [0, 1]
    assert closed == []  # as SyncVecEnv, which does not close them either


_OPEN_AT_EXIT = """
import asyncio, sys
import numpy as np
import sekai

class Feed(sekai.Env):
    def __init__(self):
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    async def async_reset(self, *, seed=None, options=None):
        self.reader = asyncio.get_running_loop().create_task(self._read())
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    async def _read(self):
        try:
            await asyncio.sleep(3600)
        finally:
            print("cleaned", flush=True)

    def reset(self, *, seed=None, options=None):
        return asyncio.run(self.async_reset(seed=seed, options=options))

    def step(self, action):
        raise NotImplementedError

vec = sekai.AsyncVecEnv([Feed, Feed])
vec.reset(seed=0)
"""


_SLOW_CALLBACK = re.compile(r"Executing <.*> took \d+\.\d+ seconds")


def test_open_at_exit_it_cancels_the_tasks_on_its_loop_before_the_interpreter_finalises(
    tmp_path: Any,
) -> None:
    script = tmp_path / "open_at_exit.py"
    script.write_text(_OPEN_AT_EXIT)
    done = subprocess.run(
        [sys.executable, "-X", "dev", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cleaned", "cleaned"]
    # No "Task was destroyed but it is pending!", no unclosed loop. Debug mode also logs any
    # callback slower than 0.1 s, which a loaded machine makes of a plain one: not a finding.
    logged = [line for line in done.stderr.splitlines() if not _SLOW_CALLBACK.fullmatch(line)]
    assert logged == [], done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_leaves_the_parents_loops_alone_at_exit() -> None:
    vec = _venues(1, [])
    vec.reset()
    assert vec._loop in async_vec_env._LOOPS
    pid = os.fork()
    if pid == 0:  # the child shares the parent's selector: shutting its loop down would harm it
        # The selector given to the inherited loop stays close-on-exec, as the original (PEP 446).
        inheritable = os.get_inheritable(vec._loop._selector.fileno())  # type: ignore[attr-defined]
        os._exit(len(async_vec_env._LOOPS) + 2 * inheritable)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert vec.step([1]).rewards.tolist() == [1.0]
    vec.close()


_FORKED_CHILD = """
import asyncio, gc, os, signal, sys, time
import numpy as np
import sekai

class Threaded(sekai.Env):  # steps in a thread: the loop wakes up through its self-pipe
    def __init__(self):
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)
    async def async_reset(self, *, seed=None, options=None):
        return sekai.ResetResult(np.zeros(1, np.float32), {})
    async def async_step(self, action):
        await asyncio.get_running_loop().run_in_executor(None, time.sleep, 0.01)
        return sekai.StepResult(np.zeros(1, np.float32), float(action), False, False, {})
    def reset(self, *, seed=None, options=None):
        return asyncio.run(self.async_reset(seed=seed, options=options))
    def step(self, action):
        return asyncio.run(self.async_step(action))

ending = sys.argv[1]
vec = sekai.AsyncVecEnv([Threaded])
vec.reset(seed=0)
vec.step([1])
if os.fork() == 0:
    signal.alarm(10)  # a hang in the child kills it
    print("child", vec.step([1]).rewards.tolist(), flush=True)
    if ending == "close":
        vec.close()
    elif ending == "del":
        del vec
        gc.collect()
    if ending != "exit":
        os._exit(0)
    sys.exit(0)  # the interpreter finalises with vec alive: its __del__ runs
os.wait()
signal.alarm(10)  # a hang in the parent kills it
print("parent", vec.step([1]).rewards.tolist(), flush=True)
vec.close()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize("ending", ["del", "close", "exit"])
def test_a_forked_child_that_steps_and_drops_the_env_leaves_the_parents_loop_working(
    tmp_path: Any, ending: str
) -> None:
    """The child shares the parent's epoll instance: neither its steps nor its dropping,
    closing or exiting with the env may unregister the parent's self-pipe."""
    script = tmp_path / "forked_child.py"
    script.write_text(_FORKED_CHILD)
    done = subprocess.run(
        [sys.executable, str(script), ending], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.splitlines() == ["child [1.0]", "parent [1.0]"], done.stderr
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ending", ["close", "collect"])
def test_closed_or_collected_in_a_coroutine_it_still_cancels_the_tasks_on_its_loop(
    ending: str,
) -> None:
    """A web handler or a notebook cell: a loop runs in the thread, so the private one cannot
    run there; its tasks still run their finally blocks, as after close() in plain code."""
    Feed.cleaned.clear()
    vec = AsyncVecEnv([lambda i=i: Feed(i, []) for i in range(2)])
    vec.reset(seed=0)  # the sync shim: the readers live on the private loop
    loop, feeds = vec._loop, vec.envs

    async def main() -> None:
        nonlocal vec
        await vec.async_step(np.array([0, 1]))
        if ending == "close":
            vec.close()
        else:
            del vec
            gc.collect()

    asyncio.run(main())
    assert loop is not None and loop.is_closed()
    assert [feed.reader.cancelled() for feed in feeds] == [True, True]
    assert sorted(Feed.cleaned) == [0, 1]


def test_an_async_factory_is_refused_by_name_and_its_coroutine_closed(recwarn) -> None:
    async def make_env() -> sekai.Env:  # type: ignore[type-arg]
        return Venue(0, [])

    with pytest.raises(TypeError) as caught:
        AsyncVecEnv([make_env])
    assert str(caught.value) == (
        "AsyncVecEnv: env_fns[0] is an async function; env factories must be plain functions "
        "returning a sekai.Env (do async set-up in the env's async_reset())."
    )
    del caught
    gc.collect()
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


@pytest.mark.parametrize("method", ["reset", "step"])
def test_sync_shims_raise_runtime_error_inside_a_running_loop(method: str) -> None:
    async def wrong() -> str:
        vec = _venues(2, [])
        try:
            if method == "reset":
                vec.reset(seed=0)
            else:
                await vec.async_reset(seed=0)
                vec.step([0, 0])
        except RuntimeError as exc:
            return str(exc)
        finally:
            vec.close()
        return "no error"

    message = asyncio.run(wrong())
    assert f"await vec.async_{method}" in message


def test_overlapping_async_calls_raise_async_call_pending() -> None:
    async def go() -> tuple[Any, BaseException | None]:
        vec = _venues(2, [])
        await vec.async_reset(seed=0)
        first = asyncio.ensure_future(vec.async_step([0, 0]))
        await asyncio.sleep(0)  # the first call is now waiting inside the sub-envs
        error = None
        try:
            await vec.async_step([1, 1])
        except sekai.AsyncCallPending as exc:
            error = exc
        result = await first
        again = await vec.async_step([1, 1])  # usable once the first call finished
        vec.close()
        return (result, again), error

    (result, again), error = asyncio.run(go())
    assert isinstance(error, sekai.AsyncCallPending)
    assert result.rewards.tolist() == again.rewards.tolist() == [1.0, 1.0]


def test_failing_sub_env_is_raised_after_the_others_finished() -> None:
    log: list[tuple[str, int]] = []
    vec = _venues(4, log, failing=(1, 3))
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="sub-env 1 failed"):
        vec.step([0, 0, 0, 0])
    assert [env.steps for env in vec.envs] == [1, 0, 1, 0]
    for env in vec.envs:
        env.fail = False
    assert vec.step([0, 0, 0, 0]).rewards.tolist() == [1.0] * 4
    vec.close()


def test_closed_async_vec_env_raises_vec_env_closed_before_the_loop_check() -> None:
    vec = _venues(2, [])
    vec.close()

    async def go() -> None:
        with pytest.raises(sekai.VecEnvClosed):
            await vec.async_reset(seed=0)

    asyncio.run(go())
    with pytest.raises(sekai.VecEnvClosed):
        vec.step([0, 0])


def test_vec_env_subclass_overriding_only_step_routes_async_step_to_it() -> None:
    class Doubled(SyncVecEnv):
        def step(self, actions: Any) -> Any:
            result = super().step(actions)
            return result._replace(rewards=2 * result.rewards)

    assert Doubled.async_step.__qualname__.endswith("Doubled.async_step")

    class Plain(sekai.Env):  # type: ignore[type-arg]
        def __init__(self) -> None:
            self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
            self.action_space = sekai.Discrete(2)

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return sekai.ResetResult(np.zeros(1, np.float32), {})

        def step(self, action: Any) -> Any:
            return sekai.StepResult(np.zeros(1, np.float32), 1.0, False, False, {})

    async def go() -> Any:
        with Doubled([Plain, Plain]) as vec:
            await vec.async_reset(seed=0)
            return await vec.async_step([0, 1])

    assert asyncio.run(go()).rewards.tolist() == [2.0, 2.0]
    assert isinstance(Doubled([Plain]), VecEnv)


def test_wrapped_async_vec_env_stays_concurrent() -> None:
    log: list[tuple[str, int]] = []

    async def go() -> Any:
        vec = sekai.VecNormalizeReward(sekai.VecRecordEpisodeStatistics(_venues(3, log)))
        await vec.async_reset(seed=0)
        log.clear()
        result = await vec.async_step(np.ones(3, dtype=np.int64))
        vec.close()
        return result

    result = asyncio.run(go())
    assert [kind for kind, _ in log[:3]] == ["start"] * 3
    assert result.rewards.shape == (3,)


def test_rejected_async_call_does_not_leave_a_call_pending() -> None:
    async def go() -> Any:
        vec = _venues(2, [])
        with pytest.raises(sekai.ResetRequired):
            await vec.async_step([0, 0])
        with pytest.raises(TypeError):
            await vec.async_reset(seed=1.5)
        await vec.async_reset(seed=0)
        with pytest.raises(ValueError):
            await vec.async_step([0, 0, 0])
        result = await vec.async_step([1, 1])
        vec.close()
        return result

    assert asyncio.run(go()).rewards.tolist() == [1.0, 1.0]


class Interruptible(sekai.Env):  # type: ignore[type-arg]
    """Counts finished steps; ``async_step`` waits a few loop turns, and the sub-env told to
    raises KeyboardInterrupt (as Ctrl-C would) on its first step."""

    def __init__(self, interrupt: bool) -> None:
        self.observation_space = sekai.Box(0.0, 100.0, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.interrupt = interrupt
        self.finished = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.finished += 1
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 0.0, False, False, {})

    async def async_step(self, action: Any) -> sekai.StepResult[Any]:
        if self.interrupt:
            self.interrupt = False
            raise KeyboardInterrupt
        for _ in range(3):
            await asyncio.sleep(0)
        return self.step(action)


def test_a_keyboard_interrupt_in_step_cancels_the_pending_calls_and_the_next_step_runs() -> None:
    vec = AsyncVecEnv([lambda: Interruptible(False), lambda: Interruptible(True)])
    vec.reset(seed=0)
    with pytest.raises(KeyboardInterrupt):
        vec.step(np.array([0, 0]))
    waiting = vec.envs[0]
    assert isinstance(waiting, Interruptible)
    assert waiting.finished == 0  # its pending step was cancelled, not left to resume later
    result = vec.step(np.array([0, 0]))  # no AsyncCallPending
    assert result.rewards.tolist() == [0.0, 0.0]
    assert waiting.finished == 1
    vec.close()


class Gated(sekai.Env):  # type: ignore[type-arg]
    """Episodes of ``horizon`` steps; ``async_step`` / ``async_reset`` wait on the gates given
    (an Event that is never set: the call hangs until it is cancelled)."""

    def __init__(
        self,
        horizon: int,
        step_gate: asyncio.Event | None = None,
        reset_gate: asyncio.Event | None = None,
        resetting: asyncio.Event | None = None,
    ) -> None:
        self.observation_space = sekai.Box(0.0, 100.0, (1,), np.float32)
        self.action_space = sekai.Discrete(2)
        self.horizon, self.t, self.ended = horizon, 0, False
        self.step_gate, self.reset_gate, self.resetting = step_gate, reset_gate, resetting

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        self._set_rng(seed)
        self.t, self.ended = 0, False
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> Any:
        if self.ended:
            raise sekai.ResetRequired()
        self.t += 1
        self.ended = self.t >= self.horizon
        return sekai.StepResult(np.full(1, self.t, np.float32), 1.0, self.ended, False, {})

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if self.resetting is not None and self.t:
            self.resetting.set()
        if self.reset_gate is not None and self.t:
            await self.reset_gate.wait()
        return self.reset(seed=seed, options=options)

    async def async_step(self, action: Any) -> Any:
        if self.step_gate is not None:
            await self.step_gate.wait()
        return self.step(action)


async def _cancel_when(vec: Any, ready: asyncio.Event) -> None:
    """Start a step, cancel it once ``ready`` is set, and check that it raised CancelledError."""
    task = asyncio.ensure_future(vec.async_step(np.array([1, 1])))
    await ready.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_step_cancelled_during_an_autoreset_lets_the_reset_finish() -> None:
    async def main() -> None:
        never, reset_gate, resetting = asyncio.Event(), asyncio.Event(), asyncio.Event()
        vec = AsyncVecEnv(
            [lambda: Gated(1, reset_gate=reset_gate, resetting=resetting), lambda: Gated(9, never)]
        )
        await vec.async_reset(seed=0)
        task = asyncio.ensure_future(vec.async_step(np.array([1, 1])))
        await resetting.wait()  # sub-env 0 ended its episode and is resetting
        task.cancel()
        await asyncio.sleep(0)
        reset_gate.set()  # the reset finishes although the step was cancelled
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not vec.envs[0].ended  # reset: its next step works
        never.set()
        assert (await vec.async_step(np.array([1, 1]))).rewards.tolist() == [1.0, 1.0]
        vec.close()

    asyncio.run(main())


def test_a_step_cancelled_twice_during_an_autoreset_still_lets_the_reset_finish() -> None:
    async def main() -> None:
        reset_gate, resetting = asyncio.Event(), asyncio.Event()
        vec = AsyncVecEnv([lambda: Gated(1, reset_gate=reset_gate, resetting=resetting)])
        await vec.async_reset(seed=0)
        task = asyncio.ensure_future(vec.async_step(np.array([1])))
        await resetting.wait()  # the sub-env ended its episode and is resetting
        for _ in range(2):  # a timeout, then a shutdown
            task.cancel()
            await asyncio.sleep(0)
        reset_gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not vec.envs[0].ended  # reset: its next step works
        assert (await vec.async_step(np.array([1]))).rewards.tolist() == [1.0]
        vec.close()

    asyncio.run(main())


def test_a_cancel_arriving_as_the_shielded_reset_ends_is_not_lost() -> None:
    from sekai.vector._contract.subenv import _finished

    async def main() -> None:
        caller: asyncio.Future[str] | None = None

        async def reset() -> str:
            await asyncio.sleep(0)
            assert caller is not None
            asyncio.get_running_loop().call_soon(caller.cancel)  # lands as the reset ends
            return "reset"

        async def step() -> str:
            return await _finished(reset())

        caller = asyncio.ensure_future(step())
        with pytest.raises(asyncio.CancelledError):
            await caller

    asyncio.run(main())


@pytest.mark.parametrize("horizon", [1, 9], ids=["episode-ends", "episode-goes-on"])
def test_a_step_cancelled_before_its_sub_envs_ran_records_no_step(horizon: int) -> None:
    async def main() -> None:
        vec = sekai.VecRecordEpisodeStatistics(AsyncVecEnv([lambda: Gated(horizon)] * 2))
        await vec.async_reset(seed=0)
        await vec.async_step(np.array([1, 1]))
        lengths, returns = vec.episode_lengths.tolist(), vec.episode_returns.tolist()
        episodes = len(vec.tracker.episodes)  # type: ignore[attr-defined]
        task = asyncio.ensure_future(vec.async_step(np.array([1, 1])))
        await asyncio.sleep(0)  # in the gather; the sub-envs' calls have not started
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Not stepped again (an ended episode was reset in the first step).
        assert [env.t for env in vec.unwrapped.envs] == [0 if horizon == 1 else 1] * 2
        assert vec.episode_lengths.tolist() == lengths  # the previous step not counted again
        assert vec.episode_returns.tolist() == returns
        assert len(vec.tracker.episodes) == episodes  # type: ignore[attr-defined]
        vec.close()

    asyncio.run(main())


def test_a_cancelled_step_records_the_sub_envs_that_froze() -> None:
    async def main() -> None:
        never, stepped = asyncio.Event(), asyncio.Event()

        class Signals(Gated):
            def step(self, action: Any) -> Any:
                result = super().step(action)
                stepped.set()
                return result

        vec = AsyncVecEnv([lambda: Signals(1), lambda: Gated(9, never)], autoreset=False)
        await vec.async_reset(seed=0)
        await _cancel_when(vec, stepped)
        assert vec.frozen.tolist() == [True, False]  # as sub-env 0 is
        vec.close()

    asyncio.run(main())


@pytest.mark.filterwarnings("ignore:TimeLimit is wrapped around an AutoReset")
def test_a_cancelled_step_records_which_sub_envs_with_an_autoreset_inside_froze() -> None:
    # Sub-env 0's TimeLimit ends its episode around its AutoReset: it freezes. Sub-env 1's
    # AutoReset resets its own episode: it does not. Sub-env 2 never returns.
    async def main() -> None:
        never, stepped = asyncio.Event(), asyncio.Event()
        calls = []

        class Signals(Gated):
            def step(self, action: Any) -> Any:
                result = super().step(action)
                calls.append(self.t)
                if len(calls) == 2:
                    stepped.set()
                return result

        fns = [
            lambda: sekai.TimeLimit(sekai.AutoReset(Signals(9)), 1),
            lambda: sekai.TimeLimit(sekai.AutoReset(Signals(1)), 9),
            lambda: Gated(9, never),
        ]
        vec = AsyncVecEnv(fns, autoreset=False)
        await vec.async_reset(seed=0)
        task = asyncio.ensure_future(vec.async_step(np.array([1, 1, 1])))
        await stepped.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert vec.frozen.tolist() == [True, False, False]
        vec.close()

    asyncio.run(main())


def test_a_cancelled_step_starts_the_ended_episodes_afresh_in_the_statistics() -> None:
    async def main() -> None:
        second = asyncio.Event()
        calls = []

        class Counts(Gated):
            def step(self, action: Any) -> Any:
                result = super().step(action)
                calls.append(self.t)
                if len(calls) == 2:
                    second.set()
                return result

        gate = asyncio.Event()
        gate.set()
        vec = sekai.VecRecordEpisodeStatistics(
            AsyncVecEnv([lambda: Counts(2), lambda: Gated(9, gate)])
        )
        await vec.async_reset(seed=0)
        await vec.async_step(np.array([1, 1]))
        gate.clear()  # sub-env 1 hangs from now on
        await _cancel_when(vec, second)  # sub-env 0's episode ended in the cancelled step
        gate.set()
        for _ in range(2):
            result = await vec.async_step(np.array([1, 1]))
        assert result.infos[0]["episode"].episode_length == 2  # not 3: the episodes not merged
        vec.close()

    asyncio.run(main())


def test_close_while_an_async_step_runs_raises_async_call_pending() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        vec = AsyncVecEnv([lambda: Gated(9, gate), lambda: Gated(9, gate)])
        await vec.async_reset(seed=0)
        task = asyncio.ensure_future(vec.async_step(np.array([1, 1])))
        await asyncio.sleep(0)
        with pytest.raises(sekai.AsyncCallPending):
            vec.close()  # its sub-envs would close under the running step
        assert not vec.closed
        gate.set()
        assert (await task).rewards.tolist() == [1.0, 1.0]
        vec.close()
        assert vec.closed

    asyncio.run(main())


class _Plain(sekai.Env):  # type: ignore[type-arg]
    def __init__(self) -> None:
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


class _PlainAsyncReset(_Plain):
    def async_reset(self, *, seed: Any = None, options: Any = None) -> Any:  # type: ignore[override]
        return self.reset(seed=seed, options=options)  # meant as an async def


class _PlainAsyncStep(_Plain):
    def async_step(self, action: Any) -> Any:  # type: ignore[override]
        return self.step(action)  # meant as an async def


@pytest.mark.parametrize(
    ("method", "result", "sync"),
    [("async_reset", "ResetResult", "reset"), ("async_step", "StepResult", "step")],
)
def test_an_async_method_written_without_async_names_the_sub_env_and_the_method(
    method: str, result: str, sync: str
) -> None:
    plain = _PlainAsyncReset if method == "async_reset" else _PlainAsyncStep

    async def main() -> None:
        with AsyncVecEnv([_Plain, plain]) as vec:
            if method == "async_step":
                await vec.async_reset(seed=0)
            with pytest.raises(TypeError) as info:
                if method == "async_reset":
                    await vec.async_reset(seed=0)
                else:
                    await vec.async_step(np.array([0, 0]))
            assert str(info.value) == (
                f"Sub-env 1 returned a sekai.{result} from {method}(), not an awaitable: "
                f"{plain.__name__}.{method}() must be an async def (sync code goes in {sync}())."
            )

    asyncio.run(main())
