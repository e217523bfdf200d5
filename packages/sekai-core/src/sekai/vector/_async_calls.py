"""One async call of a VecEnv at a time (core.md §14 rule 8): an ``async_reset`` or
``async_step`` started while another is running raises ``AsyncCallPending`` before anything is
dispatched, on every backend, and so do ``close()``, a copy or a pickle meanwhile, and any call
of it from another thread."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from sekai.error import AsyncCallPending

__all__ = ["AsyncCalls", "claim_calls", "one_async_call", "release_calls"]

T = TypeVar("T")

# Makes the check and the set of ``_async_pending`` one step: two threads may each await an
# async call of one VecEnv on their own event loop. One lock for every VecEnv, held for those
# two statements only: a lock in each VecEnv's state would stop it from being pickled.
_BEGIN_ASYNC = threading.Lock()

_ELSEWHERE = (
    "{name} was called from another thread while a reset() or step() of it, or their async "
    "versions, runs: the call would reach its sub-envs in the middle of that one. Let that "
    "call return first (serialise the threads' calls with a lock), or give each thread its own "
    "VecEnv."
)


def _renew_begin_async_lock() -> None:
    """A forked child gets a free lock: a thread that held it at the fork is not there."""
    global _BEGIN_ASYNC
    _BEGIN_ASYNC = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_begin_async_lock)


class AsyncCalls:
    """The VecEnv's flag of a running async call and its checks."""

    # A wrapper keeps no flag of its own but while a routed async call of its own runs.
    _async_pending: bool = False
    # The thread whose async call runs this VecEnv's calls (its own async call, or that of a
    # wrapper around it whose step() passes sync calls inward); 0: none.
    _async_thread: int = 0
    # Calls that take turns under a lock (worker processes, actors): one from another thread
    # during an async call waits for it, so nothing is refused.
    _calls_take_turns: bool = False

    def _check_no_async_call(self) -> None:
        """AsyncCallPending while an ``async_reset``/``async_step`` of this VecEnv is awaited:
        a synchronous call or a ``send()``/``recv()`` would step its sub-envs under it."""
        if self._async_pending:
            raise AsyncCallPending()

    def _begin_async(self) -> None:
        """Mark an async call as running; AsyncCallPending if one already is (rule 8), also
        when another thread's event loop begins one at the same moment."""
        with _BEGIN_ASYNC:
            if self._async_pending:
                raise AsyncCallPending()
            self._claim_calls()
            self._async_pending = True

    def _end_async(self) -> None:
        """The async call that ``_begin_async()`` marked is over."""
        self._async_pending = False
        self._async_thread = 0

    def _claim_calls(self) -> bool:
        """Make this thread the one whose calls this VecEnv runs (``_BEGIN_ASYNC`` held); False
        if it already is; AsyncCallPending if another thread's async call holds it, unless the
        calls take turns (then the claim refuses nothing, as ``_check_open`` does not)."""
        thread = threading.get_ident()
        if self._async_thread == thread:
            return False
        if self._async_thread and not self._calls_take_turns:
            raise AsyncCallPending(_ELSEWHERE.format(name=type(self).__name__))
        self._async_thread = thread
        return True

    def _check_no_async_call_elsewhere(self) -> None:
        """AsyncCallPending for a call from another thread while an async call runs this
        VecEnv's calls: where the async methods run the sync ones, nothing else stops it from
        stepping or reading the sub-envs in the middle of that call."""
        thread = self._async_thread
        if thread and thread != threading.get_ident() and not self._calls_take_turns:
            raise AsyncCallPending(_ELSEWHERE.format(name=type(self).__name__))


def one_async_call(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` (a VecEnv's sync ``reset`` or ``step``) run as one async call of the VecEnv it
    is called on: what the async methods that the routing rule gives a backend run."""

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> T:
        self._begin_async()
        try:
            return fn(self, *args, **kwargs)
        finally:
            self._end_async()

    return call


def claim_calls(envs: Iterable[AsyncCalls]) -> tuple[AsyncCalls, ...]:
    """Make this thread the one whose calls each of ``envs`` runs (a wrapper's own async call
    over them): those it was not yet; none if another thread's async call holds one
    (AsyncCallPending)."""
    claimed: list[AsyncCalls] = []
    with _BEGIN_ASYNC:
        try:
            for env in envs:
                if env._claim_calls():
                    claimed.append(env)
        except BaseException:
            release_calls(claimed)
            raise
    return tuple(claimed)


def release_calls(envs: Iterable[AsyncCalls]) -> None:
    """Undo ``claim_calls``: the envs run any thread's calls again."""
    for env in envs:
        env._async_thread = 0
