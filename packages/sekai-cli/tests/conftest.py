"""Run the ``sekai`` command as a user would: a subprocess in a scratch directory.

Fixtures: ``sekai_cli`` runs the venv's console script (or ``python -m sekai``) with
``tmp_path`` as the working directory; ``my_envs`` writes a module registering test envs there
(used with ``-m my_envs``); ``fake_dists`` puts fake installed distributions with ``sekai``
entry points on the path (a working third-party pack and a broken one); ``terminal_cli``
runs the CLI with stdout or stderr on a pseudo-terminal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

RunCli = Callable[..., "subprocess.CompletedProcess[str]"]


def sekai_script() -> str:
    """The ``sekai`` console script of this venv (not one found elsewhere on PATH)."""
    scripts = sysconfig.get_path("scripts")
    found = shutil.which("sekai", path=scripts) or shutil.which(
        "sekai", path=str(Path(sys.executable).parent)
    )
    if found is None:
        pytest.fail(f"no `sekai` console script in {scripts}: is sekai-cli installed?")
    return found


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without variables that would change the CLI's output.

    ``PYTHONPATH`` is kept, so that the CLI runs the sources these tests run on (a checkout
    put first on the path); a ``PYTHONPATH`` in ``extra`` goes before it.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"NO_COLOR", "SEKAI_DISABLE_PLUGINS", "PYTHONWARNINGS"}
    }
    extra = dict(extra or {})
    if "PYTHONPATH" in extra and env.get("PYTHONPATH"):
        extra["PYTHONPATH"] = os.pathsep.join((extra["PYTHONPATH"], env["PYTHONPATH"]))
    env.update(extra)
    return env


@pytest.fixture
def sekai_cli(tmp_path: Path) -> RunCli:
    """Run ``sekai *args`` in ``tmp_path``; returns the CompletedProcess (text mode).

    Keyword arguments: ``env`` (extra environment variables), ``module=True`` to run
    ``python -m sekai`` instead of the console script, ``stdout`` (a file descriptor to write
    stdout to instead of capturing it), ``timeout``.
    """

    def run(
        *args: str,
        env: Mapping[str, str] | None = None,
        module: bool = False,
        stdout: int | None = None,
        timeout: float = 240.0,
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sekai"] if module else [sekai_script()]
        return subprocess.run(
            [*command, *args],
            cwd=tmp_path,
            env=clean_env(env),
            stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture
def sekai_shell(tmp_path: Path) -> Callable[[str], subprocess.CompletedProcess[str]]:
    """Run a shell command line in ``tmp_path`` where ``sekai`` is this venv's console script."""

    def run(command_line: str) -> subprocess.CompletedProcess[str]:
        bin_dir = str(Path(sekai_script()).parent)
        env = clean_env({"PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")})
        return subprocess.run(
            ["/bin/sh", "-c", command_line],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    return run


MY_ENVS = '''
"""Envs a user registers from their own module (sekai -m my_envs ...)."""

from pathlib import Path

import numpy as np

import sekai
from sekai.testing.envs import LineEnv


class Plain(sekai.Env):
    metadata = {}

    def __init__(self, scale=1.0):
        self.scale = scale
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), {})

    def step(self, action):
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 0.0, False, False, {})


class Broken(Plain):
    def __init__(self):
        raise ValueError("bad size")


class Abstract(sekai.Env):
    """Forgot reset and step: building it raises Python's own TypeError."""

    def __init__(self):
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)


class StepFails(Plain):
    def step(self, action):
        raise RuntimeError("boom at step")


class WorkerFails(Plain):
    """Fails as a ProcVecEnv sub-env would, with the worker's traceback in the message."""

    def step(self, action):
        raise sekai.VecEnvWorkerError(0, "RuntimeError", "boom", "Traceback (most recent...)")


class Unseeded(Plain):
    """reset(seed=0) ignores the seed: a WARNING, not an ERROR."""

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.random.default_rng().random(1).astype(np.float32), {})


class OutOfSpace(Plain):
    """Observations outside observation_space: an ERROR."""

    def step(self, action):
        return sekai.StepResult(np.full(1, 5.0, dtype=np.float32), 0.0, False, False, {})


class CloseFails(OutOfSpace):
    """An ERROR for check, and a close() that raises once the work is done."""

    def close(self):
        raise RuntimeError("close failed")


class BoolReward(Plain):
    """A bool reward at every step: one WARNING counting the steps taken."""

    def step(self, action):
        return sekai.StepResult(np.zeros(1, dtype=np.float32), True, False, False, {})


class Drifting(Plain):
    """Seeded resets but unseeded steps: found only by the determinism check."""

    def step(self, action):
        obs = np.random.default_rng().random(1).astype(np.float32)
        return sekai.StepResult(obs, 0.0, False, False, {})


class Truncated(Plain):
    """Truncated at its third step, and refuses a step after that (as the finance envs do)."""

    def __init__(self):
        super().__init__()
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        self.steps = 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        if self.steps == 3:
            raise sekai.ResetRequired("stepped after the episode was truncated")
        self.steps += 1
        return sekai.StepResult(np.zeros(1, dtype=np.float32), 0.0, False, self.steps == 3, {})


class Recorder(Plain):
    """Writes every action it received to ``path`` when closed."""

    def __init__(self, path):
        super().__init__()
        self.path = path
        self.actions = []

    def step(self, action):
        self.actions.append(int(action))
        return super().step(action)

    def close(self):
        Path(self.path).write_text(" ".join(map(str, self.actions)))


sekai.register(
    "mine/Line-v0",
    "sekai.testing.envs:LineEnv",
    vector_entry_point="sekai.testing.envs:LineVecEnv",
    max_episode_steps=20,
)
sekai.register("mine/Plain-v0", Plain, kwargs={"scale": 2.0})
sekai.register("mine/Broken-v0", Broken)
sekai.register("mine/Abstract-v0", Abstract)
sekai.register("mine/BadKwargs-v0", Plain, kwargs={"size": 3})
sekai.register("mine/StepFails-v0", StepFails)
sekai.register("mine/WorkerErr-v0", WorkerFails)
sekai.register("mine/Unseeded-v0", Unseeded)
sekai.register("mine/OutOfSpace-v0", OutOfSpace)
sekai.register("mine/CloseFails-v0", CloseFails, max_episode_steps=10)
sekai.register("mine/BoolReward-v0", BoolReward)
sekai.register("mine/Drifting-v0", Drifting)
sekai.register("mine/Truncated-v0", Truncated)
sekai.register("mine/Recorder-v0", Recorder, kwargs={"path": "actions.txt"})
# Entry points of modules that do not exist: listing must not import them.
sekai.register(
    "mine/Lazy-v0", "not_a_module_at_all:Env", vector_entry_point="not_a_module_at_all:VecEnv"
)
'''


@pytest.fixture
def my_envs(tmp_path: Path) -> str:
    """Write ``my_envs.py`` (registering ``mine/*`` IDs) into the CLI's working directory."""
    (tmp_path / "my_envs.py").write_text(textwrap.dedent(MY_ENVS))
    return "my_envs"


def _fake_dist(
    site: Path, name: str, plugin: str, module: str, source: str, requires: tuple[str, ...] = ()
) -> None:
    dist_info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    dist_info.mkdir(parents=True)
    declared = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n{declared}"
    )
    (dist_info / "entry_points.txt").write_text(f"[sekai]\n{plugin} = {module}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(source))


FAKE_PACK = """
from sekai.plugins import hookimpl


@hookimpl
def sekai_register_envs(registry):
    registry.register(
        "fake/Line-v0",
        "sekai.testing.envs:LineEnv",
        vector_entry_point="sekai.testing.envs:LineVecEnv",
        max_episode_steps=20,
    )
"""

FAKE_BROKEN = """
import not_a_real_dependency
"""


@pytest.fixture
def fake_dists(tmp_path: Path) -> dict[str, str]:
    """Environment variables installing ``sekai-fake-pack`` and ``sekai-fake-broken`` (0.1.0).

    The pack's plugin ``fake`` registers ``fake/Line-v0``; the broken one's plugin
    ``fakebroken`` fails to import (``No module named 'not_a_real_dependency'``).
    """
    site = tmp_path / "site"
    _fake_dist(site, "sekai-fake-pack", "fake", "sekai_fake_pack_plugin", FAKE_PACK)
    _fake_dist(site, "sekai-fake-broken", "fakebroken", "sekai_fake_broken_plugin", FAKE_BROKEN)
    return {"PYTHONPATH": str(site)}


@pytest.fixture
def fake_dist(tmp_path: Path) -> Callable[..., dict[str, str]]:
    """Install a fake distribution: ``fake_dist(name, plugin, module, source, requires=())``
    writes its metadata (one ``sekai`` entry point, ``plugin = module``, and ``Requires-Dist``
    lines) and ``module.py`` into ``tmp_path/site`` and returns the environment variables
    putting that folder on the path."""
    site = tmp_path / "site"

    def install(
        name: str, plugin: str, module: str, source: str, requires: tuple[str, ...] = ()
    ) -> dict[str, str]:
        _fake_dist(site, name, plugin, module, source, requires)
        return {"PYTHONPATH": str(site)}

    return install


@pytest.fixture
def terminal_cli(tmp_path: Path) -> Callable[..., tuple[int, str, str]]:
    """Run ``sekai *args`` with one stream on a pseudo-terminal, as in an interactive shell.

    Call it as ``terminal_cli(*args, stream="stdout" | "stderr", env={...})``; it returns
    ``(returncode, stdout, stderr)``, the terminal's text with ``\\r\\n`` line ends.
    """

    def run(*args: str, stream: str, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
        return _run_with_terminal(args, stream=stream, cwd=tmp_path, env=env)

    return run


def _run_with_terminal(
    args: Sequence[str], *, stream: str, cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[int, str, str]:
    import pty

    master, slave = pty.openpty()
    other = subprocess.PIPE
    try:
        proc = subprocess.Popen(
            [sekai_script(), *args],
            cwd=cwd,
            env=clean_env(env),
            stdout=slave if stream == "stdout" else other,
            stderr=slave if stream == "stderr" else other,
            text=True,
        )
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    piped_out, piped_err = proc.communicate(timeout=240)
    terminal = b"".join(chunks).decode()
    if stream == "stdout":
        return proc.returncode, terminal, piped_err
    return proc.returncode, piped_out, terminal
