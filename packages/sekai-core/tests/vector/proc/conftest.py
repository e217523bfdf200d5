"""Run fault-injection scripts in their own process, with a hard timeout.

``run_script(body)`` writes ``body`` (under an ``if __name__ == "__main__":`` guard unless
``guard=False``) after a header importing ``faulty`` (the helpers next to this file, copied to
the script's directory), runs it with ``python -W error`` and returns the finished process.
``start_script`` does the same without waiting, for tests that signal the script; ``faulty``
is that module loaded here, to watch a script's processes from the test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

HEADER = """\
import os, signal, sys, threading, time
import numpy as np
import sekai
from sekai.vector import ProcVecEnv
from faulty import *
if os.environ.get("SEKAI_TEST_PROC_PIPES"):  # the transport fixture's pipes-only run
    import sekai.vector.proc.pool
    sekai.vector.proc.pool.USE_MAIL = False
# Ctrl-C as in a terminal, even when the tests run as a background job (started with it ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
"""

HARD_TIMEOUT = 60.0  # seconds: a script that runs longer has hung


class Finished(NamedTuple):
    """A script that ended: return code, output, errors and the JSON lines it printed."""

    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines of the output, in order."""
        return [json.loads(line) for line in self.out.splitlines() if line.startswith("{")]


class Script:
    """A started script: its process, marker directory and helpers to watch it."""

    def __init__(self, process: subprocess.Popen[str], marks: Path) -> None:
        self.process = process
        self.marks = marks

    def wait_mark(self, name: str, timeout: float = 30.0) -> None:
        """Wait until the script (or one of its workers) creates marker ``name``."""
        deadline = time.monotonic() + timeout
        while not (self.marks / name).exists():
            if self.process.poll() is not None:
                out, err = self.process.communicate()
                pytest.fail(f"the script ended before marking {name!r}:\n{out}\n{err}")
            if time.monotonic() > deadline:
                pytest.fail(f"the script did not mark {name!r} within {timeout} s")
            time.sleep(0.01)

    def line(self) -> dict[str, Any]:
        """The next JSON line the script prints."""
        assert self.process.stdout is not None
        text = self.process.stdout.readline()
        if not text:
            pytest.fail(f"the script printed nothing more: {self.process.stderr.read()}")  # type: ignore[union-attr]
        return json.loads(text)  # type: ignore[no-any-return]

    def finish(self) -> Finished:
        """Wait for the script to end (fails the test if it hangs)."""
        try:
            out, err = self.process.communicate(timeout=HARD_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            pytest.fail(f"the script hung:\n{out}\n{err}")
        return Finished(self.process.returncode, out, err)


def _write(tmp_path: Path, body: str, guard: bool) -> Path:
    shutil.copy(Path(__file__).with_name("faulty.py"), tmp_path / "faulty.py")
    body = textwrap.dedent(body)
    if guard:
        body = 'if __name__ == "__main__":\n' + textwrap.indent(body, "    ")
    script = tmp_path / "script.py"
    script.write_text(HEADER + body)
    (tmp_path / "marks").mkdir(exist_ok=True)
    return script


def _env(tmp_path: Path) -> dict[str, str]:
    # PYTHONPATH stays: the scripts must import the sources this test run imports.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env["FAULTY_MARKS"] = str(tmp_path / "marks")
    return env


@pytest.fixture(autouse=True, params=["mail", "pipes"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs twice: with the workers' mailboxes where futexes are, and with
    the pipes alone (the only transport elsewhere, and the fallback for long messages)."""
    from sekai.vector.proc import futex, pool

    if request.param == "mail":
        if not futex.AVAILABLE:
            pytest.skip("no futexes on this platform: ProcVecEnv uses its pipes alone")
        monkeypatch.setattr(pool, "USE_MAIL", True)
        monkeypatch.delenv("SEKAI_TEST_PROC_PIPES", raising=False)
    else:
        monkeypatch.setattr(pool, "USE_MAIL", False)
        monkeypatch.setenv("SEKAI_TEST_PROC_PIPES", "1")
    return str(request.param)


@pytest.fixture
def start_script(tmp_path: Path) -> Iterator[Callable[..., Script]]:
    """Start a script (see the module docstring); it is killed at the end of the test."""
    started: list[subprocess.Popen[str]] = []

    def start(body: str, *, guard: bool = True, new_session: bool = False) -> Script:
        script = _write(tmp_path, body, guard)
        process = subprocess.Popen(
            [sys.executable, "-W", "error", str(script)],
            cwd=tmp_path,
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=new_session,
        )
        started.append(process)
        return Script(process, tmp_path / "marks")

    yield start
    for process in started:
        if process.poll() is None:
            with_group = os.getpgid(process.pid) == process.pid
            (os.killpg if with_group else os.kill)(process.pid, signal.SIGKILL)
            process.communicate()


@pytest.fixture
def run_script(start_script: Callable[..., Script]) -> Callable[..., Finished]:
    """Run a script to the end; fails the test if it hangs."""

    def run(body: str, *, guard: bool = True) -> Finished:
        return start_script(body, guard=guard).finish()

    return run


@pytest.fixture(scope="session")
def faulty() -> types.ModuleType:
    """The ``faulty`` helpers, loaded in the test process (to watch a script's processes)."""
    spec = importlib.util.spec_from_file_location("faulty", Path(__file__).with_name("faulty.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
