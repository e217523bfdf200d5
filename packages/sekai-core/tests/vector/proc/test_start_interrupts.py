"""Ctrl-C while ProcVecEnv's processes start: they print no traceback.

A terminal's Ctrl-C reaches every process of its group, the fork server and the workers that
are still starting included. Each SIGINT here is sent deterministically by the process itself,
at the moment it starts up: the fork server while it imports its preloaded modules, a spawned
worker while it imports the parent's main module. The ProcVecEnv then works as usual, and
nothing is printed on stderr.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods()
    or not hasattr(signal, "pthread_sigmask"),
    reason="no fork server and no signal masks on this platform (Windows)",
)
RunScript = Callable[..., Any]

_FORK_SERVER = """
import multiprocessing


def sigint_as_usual(queue):
    held = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    queue.put(signal.getsignal(signal.SIGINT) is signal.default_int_handler and not held)


if __name__ == "__main__":
    multiprocessing.set_forkserver_preload(["ctrl_c_on_import"])
    with ProcVecEnv(probes(2), context="forkserver") as vec:
        vec.reset(seed=0)
        print(vec.step([1, 1]).rewards.tolist())
    # Another process of the same fork server (a user's own) handles SIGINT as Python does.
    ctx = multiprocessing.get_context("forkserver")
    queue = ctx.Queue()
    other = ctx.Process(target=sigint_as_usual, args=(queue,))
    other.start()
    print(queue.get(timeout=30))
    other.join()
"""


def test_ctrl_c_while_the_fork_server_imports_its_modules(
    run_script: RunScript, tmp_path: Path
) -> None:
    # Only the fork server imports this module (preloaded before sekai's worker module).
    (tmp_path / "ctrl_c_on_import.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
    )
    done = run_script(_FORK_SERVER, guard=False)
    assert (done.code, done.out, done.err) == (0, "[1.0, 1.0]\nTrue\n", "")


_SPAWN = """
if __name__ == "__mp_main__":  # a spawned worker imports the parent's main module so
    os.kill(os.getpid(), signal.SIGINT)

if __name__ == "__main__":
    with ProcVecEnv(probes(2), context="spawn") as vec:
        vec.reset(seed=0)
        print(vec.step([1, 1]).rewards.tolist())
"""


def test_ctrl_c_while_a_spawned_worker_imports_the_main_module(run_script: RunScript) -> None:
    done = run_script(_SPAWN, guard=False)
    assert (done.code, done.out, done.err) == (0, "[1.0, 1.0]\n", "")
