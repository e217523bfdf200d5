"""Linux futexes on shared memory, through ``ctypes``: how a ProcVecEnv wakes all its workers
with one system call, and how the last worker to finish wakes the parent.

Only on Linux x86-64 (``AVAILABLE``): the mailbox protocol built on them relies on x86-64's
ordering of stores (a worker never sees a command's sequence number before its bytes);
elsewhere ProcVecEnv talks to its workers through their pipes alone.

A futex word is a 32-bit integer in memory that several processes map. ``wait`` sleeps while
the word still holds the value the caller last read (so a change made just before it is
never missed); ``wake`` wakes the sleepers. Each sleeper waits with a bitset, and ``wake``
wakes only those whose bitset meets its own: one word serves a worker each.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import sys
from typing import Any

__all__ = ["ALL", "AVAILABLE", "address", "fence", "wait", "wake"]

ALL = 0xFFFFFFFF  # the bitset that meets every sleeper's
_INT_MAX = 0x7FFFFFFF
_SYS_FUTEX = 202  # x86-64
_WAIT_BITSET, _WAKE_BITSET, _WAKE, _PRIVATE = 9, 10, 1, 128


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _syscall() -> Any:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall  # releases the GIL while it runs
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    function.argtypes = [
        ctypes.c_long,
        ctypes.c_void_p,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_uint,
    ]
    return function


_dummy = ctypes.c_int32(0)  # a word of this process nobody waits on (``fence``, the probe)
_DUMMY = ctypes.addressof(_dummy)


def _works(call: Any) -> bool:
    """Whether the kernel answers the two operations used (a sandbox may refuse them)."""
    if call(_SYS_FUTEX, _DUMMY, _WAKE_BITSET, 1, None, None, ALL) < 0:
        return False
    far = _Timespec(0, 0)  # the word holds 0, not 1: returns at once with EAGAIN
    if call(_SYS_FUTEX, _DUMMY, _WAIT_BITSET, 1, ctypes.byref(far), None, ALL) == 0:
        return False
    return ctypes.get_errno() == errno.EAGAIN


_call = _syscall()
if _call is not None and not _works(_call):
    _call = None
AVAILABLE = _call is not None


def address(buffer: Any, offset: int) -> int:
    """The address of the 32-bit word at ``offset`` of a writable ``buffer`` (a shared
    memory block's ``buf``), valid while the buffer stays mapped."""
    return ctypes.addressof(ctypes.c_int32.from_buffer(buffer, offset))


def wake(word: int, bits: int = ALL) -> None:
    """Wake the processes sleeping on ``word`` with a bitset meeting ``bits``."""
    _call(_SYS_FUTEX, word, _WAKE_BITSET, _INT_MAX, None, None, bits)


def wait(word: int, expected: int, bits: int, deadline: float) -> None:
    """Sleep while ``word`` holds ``expected``, until a ``wake`` meeting ``bits``, a signal,
    or ``deadline`` (``time.monotonic()``); return at once if it holds another value.

    A Ctrl-C interrupts the sleep: Python raises it when this returns.
    """
    # FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time: time.monotonic()'s on Linux
    seconds = int(deadline)
    when = _Timespec(seconds, int((deadline - seconds) * 1e9))
    if _call(_SYS_FUTEX, word, _WAIT_BITSET, expected & ALL, ctypes.byref(when), None, bits):
        code = ctypes.get_errno()
        if code not in (errno.EAGAIN, errno.ETIMEDOUT, errno.EINTR):
            raise OSError(code, f"futex wait failed: {errno.errorcode.get(code, code)}")


def fence() -> None:
    """A full memory barrier: the stores before it are seen by every processor before the
    loads after it are made (the kernel's futex wake path issues one)."""
    _call(_SYS_FUTEX, _DUMMY, _WAKE | _PRIVATE, 1, None, None, 0)
