"""Ctrl-C in sekai's own bookkeeping and during AsyncVecEnv's sync shims.

``holding_interrupts`` holds Ctrl-C across a few statements that must run together (a
command handed to a worker and recorded as in flight, bytes taken from a pipe and kept): a
SIGINT that comes meanwhile raises KeyboardInterrupt right after them. Inside such a block,
``interruptible`` opens the waits that may take long (a pipe that has no room), where Ctrl-C
raises at once as usual, so that a hold never keeps the user waiting on a hung worker. A
hold replaces Python's SIGINT handler rather than masking the signal: a signal mask would
hold SIGINT in this thread only, and Python runs the handler in the main thread whichever
thread the signal reached.

AsyncVecEnv's sync shims make the calls on their private loop end cleanly. Python's own
SIGINT handler raises KeyboardInterrupt at whatever line runs, the event loop's own code
included, where it can drop the callback that would wake a task up (the call then
never ends, and neither does the loop's shutdown at exit) or a coroutine not yet wrapped in a
task. While a shim call runs, ``taking_interrupts`` replaces it, as ``asyncio.run()`` does:

- the first SIGINT cancels the call at the loop's next turn (or stops it from starting), and
  KeyboardInterrupt is raised once the call has ended;
- a second one gives up on the call, for sub-env code that does not return to the loop: it
  raises KeyboardInterrupt in that code, or at the loop's next turn when it lands in asyncio
  or sekai's own code (never half-way through them). A call still pending then is dropped
  with its loop (``abandon``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar

__all__ = [
    "Interrupts",
    "abandon",
    "holding_interrupts",
    "interruptible",
    "run_interruptible",
    "taking_interrupts",
]

T = TypeVar("T")

# Code that a second Ctrl-C does not interrupt half-way: it returns to the loop soon (the
# async routing helpers check what a sub-env's async method returned before it is awaited).
_MACHINERY = ("asyncio.", "sekai.vector.", "sekai.core._async.")
_STDLIB = os.path.dirname(contextlib.__file__) + os.sep

# signal.signal() and signal.getsignal() wrap handlers in enums, which costs more than the rest
# of a light env's step(): the C functions they call, where Python has them.
_SIGNALS: Any = sys.modules.get("_signal", signal)
_SIGINT = int(signal.SIGINT)


class _Hold:
    """The SIGINT handler while ``holding_interrupts`` blocks run (in the main thread only):
    it keeps a SIGINT for the outermost block to raise, or raises it at once inside an
    ``interruptible`` wait."""

    __slots__ = ("depth", "open", "pending")

    def __init__(self) -> None:
        self.depth = 0  # the holding blocks running, nested
        self.open = False  # an interruptible wait runs in the innermost one
        self.pending = False  # a SIGINT came and was not raised yet

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.open:
            self.pending = False
            raise KeyboardInterrupt
        self.pending = True


_HOLD = _Hold()


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class holding_interrupts:  # named as a function, like contextlib.suppress
    """Hold Ctrl-C while the block runs: a SIGINT that comes meanwhile raises KeyboardInterrupt
    once the block has ended (or at once inside an ``interruptible`` wait in it).

    Only in the main thread, in place of Python's default handler (a handler of the user's is
    left alone: the block then runs as it would without this). The block must not wait long
    outside ``interruptible``: a SIGINT would not end the wait.
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: bool | None = None  # the enclosing block's ``open``; None: not holding

    def __enter__(self) -> None:
        hold = _HOLD
        if not _in_main_thread():
            return
        if hold.depth:  # nested: an interruptible wait it runs in is closed meanwhile
            self._open, hold.open = hold.open, False
            hold.depth += 1
            return
        if _SIGNALS.getsignal(_SIGINT) is not signal.default_int_handler:
            return
        hold.open = hold.pending = False
        hold.depth = 1
        self._open = False
        try:
            _SIGNALS.signal(_SIGINT, hold)
        except BaseException as error:  # raised by another signal's handler: undone
            self.__exit__(type(error))
            raise

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if self._open is None:
            return
        hold = _HOLD
        hold.depth -= 1
        if hold.depth:
            hold.open = self._open
            if not hold.open:
                return
        elif _SIGNALS.getsignal(_SIGINT) is hold:
            _SIGNALS.signal(_SIGINT, signal.default_int_handler)
        if hold.pending:
            hold.pending = False
            if exc_type is None or not issubclass(exc_type, KeyboardInterrupt):
                raise KeyboardInterrupt  # the block's own error (if any) stays as its context


class interruptible:  # named as a function, like contextlib.suppress
    """Let Ctrl-C through while the block runs, inside a ``holding_interrupts`` block (a wait
    that may take long): a SIGINT held so far, or one that comes meanwhile, raises
    KeyboardInterrupt at once. Outside one, it changes nothing."""

    __slots__ = ("_open",)

    def __init__(self) -> None:
        self._open: bool | None = None  # the enclosing ``open``; None: not holding

    def __enter__(self) -> None:
        hold = _HOLD
        if not hold.depth or not _in_main_thread():
            return
        if hold.pending:
            hold.pending = False
            raise KeyboardInterrupt
        self._open, hold.open = hold.open, True

    def __exit__(self, *_: object) -> None:
        if self._open is not None:
            _HOLD.open = self._open


def _in_machinery(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs asyncio's or sekai's vector code, or a helper of the standard
    library that such code called (a WeakSet's ``add`` registering a new task)."""
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if (module + ".").startswith(_MACHINERY):
            return True
        filename = frame.f_code.co_filename
        if not filename.startswith(_STDLIB) or "site-packages" in filename:
            return False  # a sub-env's code (or a library's it called)
        frame = frame.f_back
    return False


class Interrupts:
    """The SIGINT handler of a shim call, and what it saw.

    Attributes:
        count: the SIGINTs received.
        gave_up: whether a second one was taken as giving up on the call.
    """

    def __init__(self) -> None:
        self.count = 0
        self.gave_up = False
        self._running: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None
        self._scheduled: list[asyncio.Handle] = []

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        running = self._running
        if running is None or running[0].is_closed():  # no call runs: the shim raises after
            return
        loop, task = running
        if self.count == 1:
            self._scheduled.append(loop.call_soon_threadsafe(task.cancel))
        elif loop.is_running():
            self.gave_up = True
            # At the loop's next turn, also when the KeyboardInterrupt raised below is lost
            # (it landed in a callback of the garbage collector, which drops it).
            self._scheduled.append(loop.call_soon_threadsafe(_raise_interrupt))
            if not _in_machinery(frame):
                raise KeyboardInterrupt

    def _start(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self._running = (loop, task)

    def _end(self) -> None:
        """The call has ended: what the handler scheduled on the loop must not run later."""
        self._running = None
        for handle in self._scheduled:
            handle.cancel()
        self._scheduled.clear()


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def taking_interrupts() -> Iterator[Interrupts]:
    """Make an ``Interrupts`` the SIGINT handler while the block runs, and raise
    KeyboardInterrupt at the end if a SIGINT came, in place of the CancelledError of the call
    it cancelled (or of what the call returned or raised). Only in the main thread, in place
    of Python's default handler: a handler of the user's is left alone."""
    interrupts = Interrupts()
    if (
        threading.current_thread() is not threading.main_thread()
        or _SIGNALS.getsignal(_SIGINT) is not signal.default_int_handler
    ):
        yield interrupts
        return
    _SIGNALS.signal(_SIGINT, interrupts)
    try:
        yield interrupts
    except BaseException as error:
        if not interrupts.count or isinstance(error, KeyboardInterrupt):
            raise
        if isinstance(error, asyncio.CancelledError):  # the cancellation the SIGINT asked for
            raise KeyboardInterrupt from None
        raise KeyboardInterrupt  # noqa: B904 - the call's own error stays as its context
    finally:
        if _SIGNALS.getsignal(_SIGINT) is interrupts:
            _SIGNALS.signal(_SIGINT, signal.default_int_handler)
    if interrupts.count:
        raise KeyboardInterrupt


def run_interruptible(
    loop: asyncio.AbstractEventLoop,
    coroutine: Callable[[], Coroutine[Any, Any, T]],
    interrupts: Interrupts,
) -> T:
    """Run ``coroutine()`` on ``loop`` (not running, in this thread) as a task that
    ``interrupts`` can cancel.

    When an exception escapes the loop with the task still pending (a sub-env raised
    KeyboardInterrupt, or a SIGINT handler of the user's did), the task is cancelled and the
    loop runs until it has ended, so that no sub-env call resumes later. When the caller gave
    up on the call (a second Ctrl-C), or on that wait, a task still pending is dropped with
    the loop (``abandon``): it may never end.
    """
    if interrupts.count:  # Ctrl-C before the call started: it does not start
        raise KeyboardInterrupt
    task = loop.create_task(coroutine())
    interrupts._start(loop, task)
    try:
        return _until_done(loop, task)
    except BaseException:
        if not interrupts.gave_up and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):  # the interruption is the error to report
                _until_done(loop, task)
        if not task.done():
            abandon(loop)
        elif not task.cancelled():
            task.exception()  # a KeyboardInterrupt it raised: reported here, not at exit
        raise
    finally:
        interrupts._end()


def _until_done(loop: asyncio.AbstractEventLoop, task: asyncio.Task[T]) -> T:
    """``loop.run_until_complete(task)``, except that an exception escaping the loop after the
    task ended does not leave the loop to stop at once the next time it runs (as the stop
    callback of ``run_until_complete``, already scheduled, would)."""
    current = True

    def stop(_: object) -> None:
        if current:
            loop.stop()

    task.add_done_callback(stop)
    try:
        loop.run_forever()
    finally:
        current = False
        task.remove_done_callback(stop)
    if not task.done():
        raise RuntimeError("Event loop stopped before Future completed.")
    return task.result()


def abandon(loop: asyncio.AbstractEventLoop) -> None:
    """Close ``loop`` without running it again: the coroutines of its tasks are closed (their
    ``finally`` blocks run), and what asyncio would report of the tasks dropped (destroyed
    pending, an exception never retrieved) is not printed."""
    loop.set_exception_handler(_ignore)
    for task in asyncio.all_tasks(loop):
        with contextlib.suppress(BaseException):  # a coroutine awaiting in its finally block
            task.get_coro().close()
    loop.close()


def _ignore(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The exception handler of an abandoned loop."""
