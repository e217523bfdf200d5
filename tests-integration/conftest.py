"""Options and fixtures of the cross-distribution tests (the integration and docs sessions)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
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
def install_command(wheelhouse: Path) -> Callable[[str], str]:
    """What a "not installed" hint names in these venvs: the distribution's wheel, by path.

    The venvs were installed from the wheelhouse, so the hint points at the sibling wheel of the
    one sekai-core came from (the distributions are on no index).
    """

    def command(distribution: str) -> str:
        found = sorted(wheelhouse.resolve().glob(f"{distribution.replace('-', '_')}-*.whl"))
        assert len(found) == 1, f"expected one {distribution} wheel in {wheelhouse}: {found}"
        return f"pip install {found[0]}"

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
