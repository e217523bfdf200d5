"""A pack author's first hour: `sekai new-pack`, installed into a fresh venv, passes its tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Venv

pytestmark = pytest.mark.full


@pytest.fixture(scope="module")
def pack_venv(
    make_venv: Callable[..., Venv], built_wheel: Callable[[str], Path]
) -> tuple[Venv, Path]:
    """A fresh venv with the built sekai-core and sekai-cli wheels and pytest, and a folder."""
    venv = make_venv("new-pack")
    work = venv.root.parent / "work"
    work.mkdir()
    venv.install(built_wheel("sekai-core"), built_wheel("sekai-cli"), "pytest>=8", cwd=work)
    return venv, work


def test_a_new_native_pack_installs_passes_its_tests_and_is_listed(
    pack_venv: tuple[Venv, Path],
) -> None:
    venv, work = pack_venv
    wrote = venv.run("sekai", "new-pack", "sekai-mazes", "--native", cwd=work)
    assert "  pip install -e ./sekai-mazes" in wrote.stdout.splitlines()
    venv.install("-e", "./sekai-mazes", cwd=work)
    tests = venv.run(venv.python, "-m", "pytest", "sekai-mazes", "-q", cwd=work)
    assert tests.stdout.splitlines()[-1].startswith("9 passed"), tests.stdout
    listed = venv.run("sekai", "list", "--plugins", cwd=work)
    rows = {line.split()[1]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert rows["sekai-mazes"] == ["mazes", "sekai-mazes", "0.1.0", "1", "ok"]
    checked = venv.run("sekai", "check", "mazes/Walk-v0", cwd=work)
    assert checked.stdout == "mazes/Walk-v0: all checks passed.\n"
