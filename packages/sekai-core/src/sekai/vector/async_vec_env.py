"""AsyncVecEnv: runs the sub-envs' async_step()/async_reset() concurrently with asyncio."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from sekai.core._async import shut_down_loop
from sekai.core.env import Env
from sekai.error import AsyncCallPending
from sekai.vector._in_process import InProcessVecEnv
from sekai.vector._interrupts import run_interruptible, taking_interrupts
from sekai.vector.result import VecResetResult, VecStepResult

__all__ = ["AsyncVecEnv"]

T = TypeVar("T")

_IN_RUNNING_LOOP = (
    "AsyncVecEnv.{method}() cannot run inside a running event loop (async code, Jupyter); "
    "use `await vec.async_{method}(...)` instead."
)

_OTHER_THREAD = (
    "AsyncVecEnv.{method}() was called while another thread's step() or reset() of it runs on "
    "its private event loop: its sync calls run one at a time. Wait for that call (serialise "
    "them with a lock), or give each thread its own AsyncVecEnv."
)

_SAME_THREAD = (
    "AsyncVecEnv.{method}() was called inside its own step() or reset() (from a signal "
    "handler or a callback run by that call): its sync calls run one at a time. Call it "
    "once that call has returned."
)

_ABANDONED = (
    "AsyncVecEnv.{method}() cannot run: a second Ctrl-C gave up on an earlier step() or "
    "reset() while its sub-envs' calls were still running, so they were dropped half-way. "
    "close() this AsyncVecEnv and make a new one."
)


class AsyncVecEnv(InProcessVecEnv):
    """Runs the sub-envs concurrently on one event loop with ``asyncio.gather``.

    It helps when the sub-envs' ``async_step()`` really awaits (I/O-bound envs); envs with the
    default async methods run one after another, as in SyncVecEnv. ``step()`` and ``reset()``
    are sync shims running the coroutines on a private event loop, which ``close()`` closes;
    inside a running event loop they raise RuntimeError: await ``async_step()`` /
    ``async_reset()`` there. Ctrl-C during a shim call cancels the sub-envs' pending calls,
    then raises KeyboardInterrupt (see ``sekai.vector._interrupts``).

    Args:
        env_fns: zero-argument callables, one per sub-env, that build the sub-envs.
        autoreset: reset a finished sub-env within the same step (default); with False a
            finished sub-env is frozen until the next reset.
    """

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: bool = True
    ) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_pid = 0  # the process that made the private loop
        self._shim_lock = threading.Lock()  # held by the sync shim call running the loop
        self._shim_thread: int | None = None  # ... in this thread
        super().__init__(env_fns, autoreset=autoreset)

    # -- sync shims ----------------------------------------------------------------------------

    def _shim(self, method: str, coroutine: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        """Run ``coroutine(*args)`` on the private loop, after checking that no loop runs in
        this thread and that no other thread's shim call is running it (AsyncCallPending, as
        for overlapping async calls). Ctrl-C cancels the call (``taking_interrupts``)."""
        self._check_not_inside_shim(method)
        if self._shim_lock.locked():  # named here, before _check_open's refusal
            raise AsyncCallPending(_OTHER_THREAD.format(method=method))
        self._check_open()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(_IN_RUNNING_LOOP.format(method=method))
        failure = self._failure
        try:
            with taking_interrupts() as interrupts:
                # Before the loop is touched: a loop object is not safe across threads.
                if not self._shim_lock.acquire(blocking=False):
                    raise AsyncCallPending(_OTHER_THREAD.format(method=method))
                self._shim_thread = threading.get_ident()
                try:
                    loop = self._private_loop(method)
                    call = functools.partial(coroutine, *args)
                    return run_interruptible(loop, call, interrupts)
                finally:
                    self._shim_lock.release()
        except KeyboardInterrupt as interrupt:
            if self._failure is not failure and self._failure is not None:
                # The step was cancelled: its record (rule 9) goes with the error raised.
                self._failure = (interrupt, self._failure[1])
            raise

    def _private_loop(self, method: str) -> asyncio.AbstractEventLoop:
        """The private loop, made on the first call; RuntimeError once it was abandoned."""
        loop = self._own_loop()
        if loop is None:
            loop = self._loop = asyncio.new_event_loop()
            self._loop_pid = os.getpid()
            _LOOPS.add(loop)
        elif loop.is_closed():  # only abandon() closes it while the env is open
            raise RuntimeError(_ABANDONED.format(method=method))
        return loop

    def _own_loop(self) -> asyncio.AbstractEventLoop | None:
        """The private loop, if this process made it. A forked child drops the one it
        inherited (``_detach`` freed it of the parent's selector at the fork) and closes it
        without running it: its tasks are the parent's."""
        loop = getattr(self, "_loop", None)
        if loop is not None and self._loop_pid != os.getpid():
            self._loop = None
            if not loop.is_closed() and not loop.is_running():
                with contextlib.suppress(Exception):
                    loop.close()
            return None
        return loop

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        return self._shim("reset", functools.partial(self.async_reset, seed=seed, options=options))

    def step(self, actions: Any) -> VecStepResult[Any]:
        return self._shim("step", self.async_step, actions)

    # -- the concurrent implementation ----------------------------------------------------------

    async def _gather(self, coroutines: list[Coroutine[Any, Any, T]]) -> list[Any]:
        """Run every coroutine to the end, even when some raise (rule 9)."""
        return list(await asyncio.gather(*coroutines, return_exceptions=True))

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._check_open()
        self._begin_async()
        try:
            seeds, per_env_options = self._reset_plan(seed, options)
            results = await self._gather(
                [
                    sub.async_reset(sub_seed, sub_options)
                    for sub, sub_seed, sub_options in zip(self._subenvs, seeds, per_env_options)
                ]
            )
            return self._reset_from(results, options)
        finally:
            self._end_async()

    async def async_step(self, actions: Any) -> VecStepResult[Any]:
        self._check_open()
        self._begin_async()
        try:
            per_env = self._per_env_actions(actions)
            for sub in self._subenvs:  # a sub-env's call cancelled before it started sets none
                sub.stepped = None
            try:
                results = await self._gather(
                    [sub.async_step(action) for sub, action in zip(self._subenvs, per_env)]
                )
            except asyncio.CancelledError as error:  # the caller gave up (a timeout, Ctrl-C)
                # The sub-envs that stepped are recorded as for a failed step (rule 9): the
                # frozen mask and the wrappers' episode bookkeeping stay true to them.
                ran = {i: s.stepped for i, s in enumerate(self._subenvs) if s.stepped is not None}
                stepped = [(i, r.reward, r.terminated, r.truncated) for i, r in ran.items()]
                raise self._failed_step(error, stepped, lambda i: ran[i].info) from None
            return self._step_from(results, any(isinstance(r, BaseException) for r in results))
        finally:
            self._end_async()

    # -- copy and pickle -----------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        # The loop is private to this VecEnv (close() closes it): a copy or unpickled one makes
        # its own on its first sync call, as this one did.
        state["_loop"] = None
        del state["_shim_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._shim_lock = threading.Lock()

    def _check_not_inside_shim(self, method: str) -> None:
        """AsyncCallPending for a call made inside this thread's running shim call."""
        if self._shim_lock.locked() and self._shim_thread == threading.get_ident():
            raise AsyncCallPending(_SAME_THREAD.format(method=method))

    def _check_no_async_call(self) -> None:
        # A shim call in another thread counts too, also before its coroutine has started.
        self._check_not_inside_shim("close")
        if self._shim_lock.locked():
            raise AsyncCallPending(_OTHER_THREAD.format(method="close"))
        super()._check_no_async_call()

    # -- closing -------------------------------------------------------------------------------

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            loop, self._loop = self._own_loop(), None
            if loop is not None and not loop.is_closed():
                shut_down_loop(loop)

    def __del__(self) -> None:
        # Collected without close(): the sub-envs are left as they are, as SyncVecEnv leaves
        # them; the private loop is shut down as close() does it.
        loop = self._own_loop()
        if loop is not None:
            _shut_down_quietly(loop)


def _shut_down_quietly(loop: asyncio.AbstractEventLoop) -> None:
    """``shut_down_loop`` for a private loop its VecEnv did not close: its tasks (a sub-env's
    feed reader) are cancelled and run their ``finally`` blocks instead of being destroyed
    pending. Never raises: it runs from ``__del__`` and at exit."""
    if not loop.is_closed() and not loop.is_running():
        with contextlib.suppress(Exception):
            shut_down_loop(loop)


# The private loops, shut down at exit if still open: once the interpreter finalises, a loop
# can no longer run (imports fail), and its tasks would be destroyed pending.
_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def _shut_down_all() -> None:
    for loop in list(_LOOPS):
        _shut_down_quietly(loop)


def _detach(loop: asyncio.AbstractEventLoop) -> None:
    """Give a loop a forked child inherited an empty selector of its own in place of the
    parent's: an epoll (or /dev/poll) instance is shared across fork, so closing the loop here,
    even from its own ``__del__``, would unregister the parent's self-pipe and files, and the
    parent's loop would no longer wake up. The selector's fd now names the new instance."""
    selector = getattr(loop, "_selector", None)  # asyncio's selector loops; others have none
    fileno = getattr(selector, "fileno", None)
    if selector is None or fileno is None:  # poll() and select() keep no kernel state
        return
    fresh = type(selector)()
    try:
        os.dup2(fresh.fileno(), fileno(), inheritable=False)  # as the original was (PEP 446)
    finally:
        fresh.close()


def _after_fork_in_child() -> None:
    for loop in list(_LOOPS):
        _detach(loop)
    _LOOPS.clear()  # the parent's loops: not this process's to shut down at exit


atexit.register(_shut_down_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
