"""The nox sessions fail when they check nothing (issue 30).

``noxfile.py`` is loaded with a stand-in ``nox`` module (the integration venvs do not install
nox) and its sessions are called with a fake session that records what they would run.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test dependency group installs tomli below 3.11
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

pytestmark = pytest.mark.full

REPO_ROOT = Path(__file__).resolve().parents[1]


class SessionError(Exception):
    """What ``session.error()`` raises (nox aborts the session with a failure)."""


class FakeSession:
    """Records ``run`` / ``install`` calls; ``error`` raises, as it fails a real session."""

    posargs: list[str] = []  # noqa: RUF012 - read only
    bin_paths: list[str] = []  # noqa: RUF012 - read only
    venv_backend = "uv"

    def __init__(self) -> None:
        self.runs: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.warnings: list[str] = []

    def run(self, *args: str, **kwargs: Any) -> str:
        self.runs.append((args, kwargs))
        return ""

    def install(self, *args: str, **kwargs: Any) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        raise SessionError(message)


def _decorator(*args: Any, **kwargs: Any) -> Any:
    """``@nox.session`` / ``@nox.session(...)`` / ``@nox.parametrize(...)``: keep the function."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


@pytest.fixture
def noxfile(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``noxfile.py`` loaded with a stand-in ``nox`` module."""
    nox = types.ModuleType("nox")
    nox.options = types.SimpleNamespace()  # type: ignore[attr-defined]
    nox.session = _decorator  # type: ignore[attr-defined]
    nox.parametrize = _decorator  # type: ignore[attr-defined]
    nox.Session = FakeSession  # type: ignore[attr-defined]
    nox.project = types.SimpleNamespace(  # type: ignore[attr-defined]
        load_toml=lambda path: tomllib.loads(Path(path).read_text()),
        dependency_groups=lambda pyproject, *names: tuple(
            req for name in names for req in pyproject["dependency-groups"][name]
        ),
    )
    monkeypatch.setitem(sys.modules, "nox", nox)
    spec = importlib.util.spec_from_file_location("noxfile_under_test", REPO_ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _pytest_runs(session: FakeSession) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    return [(args, kw) for args, kw in session.runs if args and args[0] == "pytest"]


def test_a_distribution_test_session_fails_when_pytest_collects_nothing(noxfile: Any) -> None:
    for dist in noxfile.DISTRIBUTIONS:
        session = FakeSession()
        noxfile.tests(session, dist)
        ((_, kwargs),) = _pytest_runs(session)
        # nox fails a session when the exit code is not in success_codes (default [0]).
        assert 5 not in kwargs.get("success_codes", [0]), dist


@pytest.mark.parametrize("profile", ["full", "minimal"])
def test_an_integration_session_fails_when_its_marker_selects_nothing(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    monkeypatch.setattr(noxfile, "_wheel", lambda session, dist: f"{dist}.whl")
    session = FakeSession()
    noxfile.integration(session, profile)
    ((_, kwargs),) = _pytest_runs(session)
    assert 5 not in kwargs.get("success_codes", [0])


def test_a_distribution_without_a_tests_folder_fails_its_session(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(noxfile, "ROOT", tmp_path)  # packages/sekai-cli/tests does not exist
    with pytest.raises(SessionError, match="sekai-cli has no tests/ folder"):
        noxfile.tests(FakeSession(), "sekai-cli")


def _failing_probe(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(args, 1, "", "ModuleNotFoundError: sekai.cli\n")


def _sekai_commands(session: FakeSession, is_sekai: Callable[[str], bool]) -> list[list[str]]:
    return [list(args[1:]) for args, _ in session.runs if args and is_sekai(args[0])]


def test_dev_runs_sekai_list_check_and_bench_without_a_way_to_skip_them(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever a probe of the command line would say, the commands run: a broken or missing
    # command then fails the session instead of being skipped with a warning.
    monkeypatch.setattr(noxfile.subprocess, "run", _failing_probe)
    session = FakeSession()
    noxfile.dev(session)
    commands = _sekai_commands(session, lambda exe: Path(exe).stem == "sekai")
    assert commands == [
        ["list"],
        ["check", "CartPole-v1"],
        ["bench", "CartPole-v1", "--steps", "2000"],
    ]
    assert session.warnings == []


def test_bench_runs_sekai_bench_in_every_mode_without_a_way_to_skip_it(
    noxfile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(noxfile.subprocess, "run", _failing_probe)
    session = FakeSession()
    noxfile.bench(session)
    commands = _sekai_commands(session, lambda exe: exe == "sekai")
    assert commands == [
        ["bench", "Portfolio-v0", "--num-envs", "16", "--mode", mode]
        for mode in ("native", "sync", "proc", "jax", "torch")
    ]
    assert session.warnings == []
