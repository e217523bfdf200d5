"""The last module that the fork server ProcVecEnv starts imports (``start_fork_server``).

The server starts with SIGINT held, so that a terminal's Ctrl-C does not kill it with a
traceback while it imports its modules. Once they are imported, this drops that Ctrl-C and
lets SIGINT through again: the processes the server forks handle it as Python does. Imported
anywhere else, it does nothing.
"""

from __future__ import annotations

import signal
import sys

__all__: list[str] = []


def _imported_by_the_fork_server() -> bool:
    from multiprocessing import forkserver

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is forkserver.main.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _let_sigint_through() -> None:
    if not hasattr(signal, "pthread_sigmask") or not _imported_by_the_fork_server():
        return
    handler = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # drops a SIGINT held meanwhile
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, handler)


_let_sigint_through()
