"""Options and fixtures of the cross-distribution tests (the integration and docs sessions)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    # The integration venvs hold sekai-broken-pack on purpose, so the first registry use in any
    # test process warns about it; with filterwarnings=error that would fail unrelated tests.
    # Only that one expected failure is ignored (pytest.warns still sees it; any other plugin
    # failure stays an error).
    config.addinivalue_line(
        "filterwarnings",
        r"ignore:sekai plugin 'broken' \(sekai-broken-pack :sekai.error.PluginLoadWarning",
    )


@pytest.fixture(autouse=True, scope="session")
def sb3_logdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Stable-Baselines3's log folder for this run, under pytest's temporary folder.

    Without ``SB3_LOGDIR``, every ``learn()`` creates an (empty) ``SB3-<date>`` folder in the
    system's temporary folder, which nothing removes. Set in ``os.environ``, so the examples and
    docs pages run in subprocesses inherit it.
    """
    folder = tmp_path_factory.mktemp("sb3-logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(folder))
        yield folder


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout the tests run from (docs/, packages/, tests-integration/packs/)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The folder of built wheels (``nox -s wheels``) the integration venv was installed from."""
    return Path(os.environ.get("SEKAI_WHEELHOUSE", REPO_ROOT / ".nox" / "_wheelhouse"))


@pytest.fixture(scope="session")
def integration_profile() -> str:
    """``"full"`` or ``"minimal"``: which wheels the nox session installed (unset: ``"dev"``)."""
    return os.environ.get("SEKAI_INTEGRATION_PROFILE", "dev")


@pytest.fixture(scope="session")
def install_command(built_wheel: Callable[[str], Path]) -> Callable[[str], str]:
    """What a "not installed" hint names in these venvs: the distribution's wheel, by path.

    The venvs were installed from the wheelhouse, so the hint points at the sibling wheel of the
    one sekai-core came from (the distributions are on no index).
    """

    def command(distribution: str) -> str:
        return f"pip install {built_wheel(distribution)}"

    return command


RunPython = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_python(tmp_path: Path) -> RunPython:
    """Run Python code in a fresh interpreter of this venv, as a user's script would run.

    Call it as ``run_python(code, env={"SEKAI_DISABLE_PLUGINS": "finance"}, check=True)``; the
    code is dedented, runs with ``tmp_path`` as its working directory (so nothing in the checkout
    shadows the installed wheels), and the result has ``returncode``, ``stdout`` and ``stderr``.
    """

    def run(
        code: str,
        *,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        timeout: float = 120.0,
    ) -> subprocess.CompletedProcess[str]:
        merged = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        merged.update(env or {})
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            cwd=tmp_path,
            env=merged,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(
                f"python exited with {done.returncode}\n--- stdout\n{done.stdout}"
                f"--- stderr\n{done.stderr}"
            )
        return done

    return run


@dataclass(frozen=True)
class Venv:
    """A fresh virtual environment a test installs into and runs commands in."""

    root: Path
    uv: str | None  # the uv executable, or None to use the venv's own pip

    @property
    def bin(self) -> Path:
        return self.root / ("Scripts" if sys.platform == "win32" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if sys.platform == "win32" else "python")

    def run(
        self, *argv: str | Path, cwd: Path, check: bool = True, timeout: float = 600.0
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` with this venv's scripts first on PATH, as an activated venv would."""
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.root)
        env["NO_COLOR"] = "1"
        done = subprocess.run(
            [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            pytest.fail(
                f"{' '.join(map(str, argv))} exited with {done.returncode}\n--- stdout\n"
                f"{done.stdout}--- stderr\n{done.stderr}"
            )
        return done

    def install(self, *requirements: str | Path, cwd: Path) -> None:
        """Install into this venv (with uv when there is one: several times faster)."""
        if self.uv is not None:
            self.run(self.uv, "pip", "install", "--python", self.python, *requirements, cwd=cwd)
        else:
            self.run(self.python, "-m", "pip", "install", "-q", *requirements, cwd=cwd)


def _uv() -> str | None:
    found = shutil.which("uv")
    if found is not None:
        return found
    try:
        import uv  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return str(uv.find_uv_bin())


@pytest.fixture(scope="session")
def run_tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder of this pytest run that every pytest-xdist worker shares.

    Build something there once per run under a ``filelock.FileLock`` of a file in it.
    """
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's base folder sits in the run's own folder (pytest-N/popen-gwK).
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def make_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Venv]:
    """Create a fresh venv (``make_venv(name, pip=False)``); build each once per module.

    A venv costs seconds to tens of seconds: request it from a module-scoped fixture.
    ``pip=True`` gives the venv its own pip (always used then), as ``python -m venv`` does.
    """
    uv = _uv()

    def make(name: str, *, pip: bool = False, root: Path | None = None) -> Venv:
        """Create venv ``name``, in ``root`` if given (where one already made is reused)."""
        root = root if root is not None else tmp_path_factory.mktemp(name) / "venv"
        owner = None if uv is None or pip else uv
        if (root / "pyvenv.cfg").is_file():
            return Venv(root, owner)
        if owner is None:
            subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        else:
            subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(root)], check=True)
        return Venv(root, owner)

    return make


@pytest.fixture(scope="session")
def built_wheel(wheelhouse: Path) -> Callable[[str], Path]:
    """The wheelhouse's wheel of a distribution (skips when ``nox -s wheels`` has not run)."""

    def find(distribution: str) -> Path:
        found = sorted(wheelhouse.glob(f"{distribution.replace('-', '_')}-*.whl"))
        if len(found) != 1:
            pytest.skip(f"no single {distribution} wheel in {wheelhouse}: run `nox -s wheels`")
        return found[0].resolve()

    return find
