"""One async call of a VecEnv at a time (core.md §14 rule 8): an ``async_reset`` or
``async_step`` started while another is running raises ``AsyncCallPending`` before anything is
dispatched, on every backend, and so do ``close()``, a copy or a pickle meanwhile, and any call
of it from another thread."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sekai.error import AsyncCallPending

__all__ = ["AsyncCalls", "one_async_call"]

T = TypeVar("T")

# Makes the check and the set of ``_async_pending`` one step: two threads may each await an
# async call of one VecEnv on their own event loop. One lock for every VecEnv, held for those
# two statements only: a lock in each VecEnv's state would stop it from being pickled.
_BEGIN_ASYNC = threading.Lock()

_ELSEWHERE = (
    "{name} was called from another thread while an async_reset() or async_step() of it runs: "
    "the call would reach its sub-envs in the middle of that one. Await that call first "
    "(serialise the threads' calls with a lock), or give each thread its own VecEnv."
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
    _async_thread: int = 0  # the thread running it (valid while ``_async_pending``)

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
            self._async_pending = True
            self._async_thread = threading.get_ident()

    def _end_async(self) -> None:
        """The async call that ``_begin_async()`` marked is over."""
        self._async_pending = False

    def _check_no_async_call_elsewhere(self) -> None:
        """AsyncCallPending for a call from another thread while an async call of this VecEnv
        runs: where the async methods run the sync ones, nothing else stops it from stepping
        or reading the sub-envs in the middle of that call. The thread running the async call
        makes its own calls through these checks."""
        if self._async_pending and self._async_thread != threading.get_ident():
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
