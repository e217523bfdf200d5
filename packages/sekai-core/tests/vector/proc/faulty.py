"""Helpers for the fault-injection scripts: a misbehaving env and process/shm inspection.

The scripts of ``test_faults.py`` run in their own process (``run_script`` in conftest.py
copies this module next to them); everything here is importable by reference, so workers
started with forkserver or spawn can unpickle it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

import numpy as np

import sekai

MARKS = os.environ.get("FAULTY_MARKS", ".")

# Actions of Probe: 0 and 1 step normally; the others misbehave in step().
RAISE, EXIT, SIGKILL, BLOCK, UNPICKLABLE, SLEEP, POISON = range(2, 9)


def _explode() -> None:
    raise RuntimeError("cannot be rebuilt here")


class Poison:
    """Pickles fine; unpickling it raises (in whichever process receives it)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_explode, ())


def mark(name: str) -> None:
    """Create the marker file ``name`` (the test process watches for it).

    Made under another name and renamed: a watcher that interrupts as soon as the marker shows
    must not cut ``mark`` short with its file still open (a ResourceWarning on stderr).
    """
    path = os.path.join(MARKS, name)
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(temporary, "w"):
        pass
    os.replace(temporary, path)


def marked(name: str) -> bool:
    """Whether the marker file ``name`` exists."""
    return os.path.exists(os.path.join(MARKS, name))


def report(**values: Any) -> None:
    """Print one JSON line for the test to read."""
    print(json.dumps(values), flush=True)


class Probe(sekai.Env):  # type: ignore[type-arg]
    """Observation ``[rank, steps]``; info ``{"action", "steps"}``; misbehaves on demand.

    Args:
        rank: the sub-env index (echoed in observations and marker names).
        close: None, "raise" (OSError), "hang" (sleeps forever) or "spin" (a busy loop that
            keeps the GIL, so nothing but SIGKILL stops it).
        ignore_term: ignore SIGTERM (set in the worker when the env is built).
    """

    def __init__(self, rank: int = 0, close: str | None = None, ignore_term: bool = False) -> None:
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(2,))
        self.action_space = sekai.Discrete(9)
        self.rank = rank
        self.close_mode = close
        self.steps = 0
        if ignore_term:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        if options and options.get("raise"):
            raise KeyError(f"reset of sub-env {self.rank} failed")
        if options and options.get("sleep"):
            mark(f"sleeping-{self.rank}")
            while True:
                time.sleep(1)
        self.steps = 0
        return sekai.ResetResult(np.array([self.rank, 0], np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        action = int(action)
        if action == RAISE:
            raise ValueError(f"sub-env {self.rank} refuses action {action}")
        if action == EXIT:
            os._exit(3)
        if action == SIGKILL:
            os.kill(os.getpid(), signal.SIGKILL)
        if action == BLOCK:
            mark(f"blocked-{self.rank}-{self.steps}")
            while not marked("release"):
                time.sleep(0.01)
        if action == SLEEP:
            mark(f"sleeping-{self.rank}")
            while True:
                time.sleep(1)
        self.steps += 1
        info: dict[str, Any] = {"action": action, "steps": self.steps}
        if action == UNPICKLABLE:
            info["lock"] = threading.Lock()
        if action == POISON:
            info["poison"] = Poison()
        obs = np.array([self.rank, self.steps], np.float32)
        return sekai.StepResult(obs, float(action), False, False, info)

    def pid(self) -> int:
        """The worker process's pid."""
        return os.getpid()

    def close(self) -> None:
        mark(f"closed-{self.rank}")
        if self.close_mode == "raise":
            raise OSError(f"close of sub-env {self.rank} failed")
        if self.close_mode == "hang":
            while True:
                time.sleep(1)
        if self.close_mode == "spin":
            sys.setswitchinterval(1e6)  # the watchdog thread never runs again
            while True:
                pass


class AnySpace(sekai.Space):  # type: ignore[type-arg]
    """Accepts anything (so a VecEnv passes any action on unchecked)."""

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> Any:
        return 0

    def contains(self, x: Any) -> bool:
        return True


class Loose(Probe):
    """A Probe whose actions are anything (steps with action 0 unless it is an int)."""

    def __init__(self, rank: int = 0) -> None:
        super().__init__(rank)
        self.action_space = AnySpace()

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return super().step(action if isinstance(action, int) else 0)


def probes(n: int, **kwargs: Any) -> list[Any]:
    """Factories of ``n`` Probes with ranks 0..n-1."""
    return [lambda i=i: Probe(i, **kwargs) for i in range(n)]


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def wait_gone(pids: list[int], timeout: float = 20.0) -> list[int]:
    """Wait until every process in ``pids`` is gone; those still alive after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def _is_resource_tracker(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"multiprocessing.resource_tracker" in cmdline.read()
    except OSError:
        return False


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (zombies and multiprocessing's resource tracker, which
    lives as long as the process that started it, excluded)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and not _is_resource_tracker(entry):
                parents[int(entry)] = int(fields[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return sorted(found)


def segments(pid: int | None = None) -> list[str]:
    """The shared-memory blocks a ProcVecEnv of process ``pid`` (default: this one) left."""
    prefix = f"sekai_{os.getpid() if pid is None else pid}_"
    return sorted(name for name in os.listdir("/dev/shm") if name.startswith(prefix))


def open_fds() -> int:
    """The number of file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd"))
