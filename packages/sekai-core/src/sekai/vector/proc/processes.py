"""Starting and ending a ProcVecEnv's worker processes (the operating-system side)."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing.process
import os
import signal
import time
from collections.abc import Iterator, Sequence
from multiprocessing import popen_fork
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from sekai.vector.proc import worker

__all__ = [
    "EXIT_WAIT",
    "GRACE",
    "closed",
    "end",
    "ending",
    "forget",
    "holding_sigint",
    "join",
    "kill",
    "out_of_descriptors",
    "spawn",
    "start_fork_server",
]

GRACE = 0.5  # seconds between terminate() and kill(), and before terminate() once interrupted
EXIT_WAIT = 1.0  # seconds a worker whose pipe closed gets to finish exiting (``ending``)
_LONGEST_JOIN = 86400.0  # seconds: join() cannot wait 25 days or more in one go
_LAUNCHING = ("__init__", "_launch")  # the methods of multiprocessing's Popen given the process
# Descriptors a launch of a worker opens at once in this process, checked free before it starts.
# The fork server's (a socket, two pipes, a copy of one): one that fails once connected kills the
# fork server, and with it the exit status of every worker it started (they look dead). A fork's
# (two pipes): CPython leaks the first where the second cannot be opened.
_LAUNCH_FDS = {"fork": 4, "forkserver": 6}
_SERVER_READY = "sekai.vector.proc.server_ready"  # imported by the fork server only


def start_fork_server(ctx: BaseContext) -> None:
    """Start the fork server if it is not running yet, having it import the worker module (and
    so sekai and NumPy) first, so that every worker forked from it starts without importing them
    again; the modules already asked for stay preloaded.

    It starts with SIGINT held (``holding_sigint``): a terminal's Ctrl-C reaches it too, and
    while it imports those modules (seconds) it would die with a traceback on the user's
    terminal. The last module it imports (``server_ready``) drops that SIGINT and lets SIGINT
    through again, so the processes it forks get Python's handling as usual. In this process
    the Ctrl-C is raised once the server has been launched.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    modules = getattr(server, "_preload_modules", None)
    running = getattr(server, "_forkserver_pid", 0) is not None
    if running or not isinstance(modules, list):
        return
    wanted = [name for name in modules if name != _SERVER_READY]
    if worker.__name__ not in wanted:
        wanted.append(worker.__name__)
    ctx.set_forkserver_preload([*wanted, _SERVER_READY])
    _start_resource_tracker()
    with holding_sigint():
        forkserver.ensure_running()


@contextlib.contextmanager
def holding_sigint() -> Iterator[None]:
    """Hold SIGINT pending in this thread while the block runs, then let it through (raising
    KeyboardInterrupt at the end if one came). A process started in the block starts with
    SIGINT held too, until it lets it through itself. A no-op where Python has no signal masks
    (Windows)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, if it is not running: spawn and the fork
    server start it with their first process, and starting it lets SIGINT through in this
    thread, which would end a ``holding_sigint`` block's hold early."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


def spawn(
    ctx: BaseContext,
    index: int,
    child: Connection,
    lifeline: Connection,
    inherited: list[Connection],
    mail: tuple[str, int, int] | None,
) -> Any:
    """Start worker ``index`` (a daemon process) on its end ``child`` of its pipe, which is
    closed here either way; ``worker.run`` says what the other arguments are."""
    method = ctx.get_start_method()
    fork = method == "fork"
    process = ctx.Process(  # type: ignore[attr-defined]
        target=worker.run,
        args=(child, lifeline, os.getpid(), fork, inherited, mail, index),
        name=f"ProcVecEnv-worker-{index}",
        daemon=True,
    )
    try:
        if method in _LAUNCH_FDS:
            _spare(child, _LAUNCH_FDS[method])
        if method == "forkserver":  # the server forks it, with the server's SIGINT handling
            process.start()
        else:  # it starts with SIGINT held, until worker.run() ignores it
            if method != "fork":
                _start_resource_tracker()
            with holding_sigint():
                process.start()
    except BaseException as exc:
        _stop_launched(process, exc)
        raise
    finally:
        child.close()
    return process


def _spare(conn: Connection, count: int) -> None:
    """Raise ``OSError`` (``EMFILE``) unless ``count`` more descriptors can be opened now."""
    copies: list[int] = []
    try:
        for _ in range(count):
            copies.append(os.dup(conn.fileno()))
    finally:
        for fd in copies:
            os.close(fd)


@contextlib.contextmanager
def out_of_descriptors(started: Sequence[Any], workers: int) -> Iterator[None]:
    """Say what to do when starting ``workers`` processes (``started``: the handles of those
    started so far) runs out of file descriptors: an ``OSError`` of the same errno."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        if exc.errno == errno.ENFILE:
            limit, more = "and the system's table of open files is full", "close other programs"
        else:
            limit = f"which may open {_open_files()} (ulimit -n)"
            more = "raise that limit (ulimit -n, or resource.setrlimit(RLIMIT_NOFILE, ...))"
        raise OSError(
            exc.errno,
            f"ProcVecEnv ran out of file descriptors after starting {len(started)} of its "
            f"{workers} worker processes: each holds a few in this process, {limit}. Pass "
            f"num_workers= to run several sub-envs per worker (about the number of cores, "
            f"{os.cpu_count()} here, is best), or {more}.",
        ) from exc


def _open_files() -> str:
    """The most files this process may open (its soft limit)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to name
        return "no more"
    return str(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _stop_launched(process: Any, exc: BaseException) -> None:
    """Kill and reap the process that a ``start()`` cut short (Ctrl-C) may have launched: the
    pool never learns of it, and with fork or spawn it would stay a zombie until the parent
    exits. Its ``Popen`` is the ``self`` of a frame ``exc`` went through when ``start()`` did
    not get to keep it: the frame of its ``__init__`` or ``_launch``, whose ``process_obj`` is
    ``process``. Only that one: ``start()`` first polls every earlier child (``_cleanup()``),
    and a Ctrl-C there leaves another process's ``Popen`` (the user's own) in the traceback."""
    popen = getattr(process, "_popen", None)
    # Past the caller's frame: reading its locals would keep ``exc`` in a cycle with them.
    frame = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    while popen is None and frame is not None:
        code, local = frame.tb_frame.f_code, frame.tb_frame.f_locals
        candidate = local.get("self")
        if (
            code.co_name in _LAUNCHING
            and local.get("process_obj") is process
            and isinstance(candidate, popen_fork.Popen)
        ):
            popen = candidate
        frame = frame.tb_next
    if popen is None or getattr(popen, "pid", None) is None:  # nothing launched, or unknown
        return
    with contextlib.suppress(Exception):
        popen.kill()
        popen.wait()


def closed(process: Any) -> bool:
    """Whether ``process`` was closed (``Process.close()``): reaped, nothing is left to end."""
    try:
        process.exitcode  # noqa: B018 - a closed Process raises ValueError on every use
    except ValueError:
        return True
    return False


def end(processes: Sequence[Any], lifeline: Connection | None, deadline: float) -> None:
    """Wait until ``deadline`` (``time.monotonic()``; inf: no limit) for ``processes`` to
    exit, then close ``lifeline`` (their watchdogs exit even if SIGTERM is ignored), terminate
    those still running and, after a grace period, kill those that ignore it."""
    for process in processes:
        join(process, deadline)
    if all(p.exitcode is not None for p in processes):
        return
    if lifeline is not None:
        lifeline.close()
    for process in processes:
        if process.exitcode is None:
            process.terminate()
    grace = time.monotonic() + GRACE
    for process in processes:
        join(process, grace)
    for process in processes:
        if process.exitcode is None:
            process.kill()
            process.join()


def ending(process: Any, wait: float) -> str:
    """How ``process`` ended: ``"was killed by SIGBUS"``, ``"exited with code 3"``, or ``""`` if
    it has not within ``wait`` seconds (or cannot be waited for here)."""
    try:
        process.join(wait)
        code = process.exitcode
    except (AssertionError, ValueError):  # closed, or not this process's child
        return ""
    if code is None:
        return ""
    if code >= 0:
        return f"exited with code {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def forget(process: Any) -> None:
    """Take ``process`` out of this process's ``multiprocessing`` children: in a child forked
    from its parent (os.fork), whose exit would otherwise terminate it (and fail to join it)
    as if it were the child's own."""
    multiprocessing.process._children.discard(process)  # type: ignore[attr-defined]


def kill(processes: Sequence[Any]) -> None:
    """Kill ``processes`` without waiting for them: signals only, no pipe or sentinel is
    touched, so a thread waiting on them sees them die (``end`` reaps them later)."""
    for process in processes:
        process.kill()


def join(process: Any, deadline: float) -> None:
    """Wait for ``process`` to exit until ``deadline`` (``time.monotonic()``; inf: no limit)."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        process.join(min(remaining, _LONGEST_JOIN))
        if process.exitcode is not None:
            return
