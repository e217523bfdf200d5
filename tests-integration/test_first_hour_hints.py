"""A newcomer's venv with only sekai-core and sekai-finance: every hint names a command that works.

The venv is installed from the built wheels, as a user installs them from files: the hints name
the sibling wheel of the one sekai-core came from; running that command makes the env available,
and the gymnasium habits tried next (render_mode=, render(), a native plain ID) are answered.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Venv

pytestmark = pytest.mark.full

_TRY = """
import json, sekai

def outcome(call):
    try:
        call()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return ["ok", ""]
"""


def _python(venv: Venv, work: Path, code: str) -> list[list[str]]:
    done = venv.run(venv.python, "-c", _TRY + textwrap.dedent(code), cwd=work)
    result: list[list[str]] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def core_and_finance(
    make_venv: Callable[..., Venv], built_wheel: Callable[[str], Path]
) -> tuple[Venv, Path]:
    venv = make_venv("core-finance")
    work = venv.root.parent / "work"
    work.mkdir()
    venv.install(built_wheel("sekai-core"), built_wheel("sekai-finance"), cwd=work)
    return venv, work


def test_only_core_and_finance_hints_install_the_sibling_wheels_and_habits_get_answers(
    core_and_finance: tuple[Venv, Path], built_wheel: Callable[[str], Path]
) -> None:
    venv, work = core_and_finance
    classic = f"pip install {built_wheel('sekai-classic')}"
    missing = _python(
        venv,
        work,
        """
        import importlib
        print(json.dumps([
            outcome(lambda: importlib.import_module("sekai.envs.classic_control")),
            outcome(lambda: sekai.make("CartPole-v1")),
            outcome(lambda: sekai.make("Trading-v0").reset(seed=0)),
        ]))
        """,
    )
    assert missing[0] == [
        "ModuleNotFoundError",
        "No module named 'sekai.envs.classic_control': it is part of the sekai-classic "
        f"distribution, which is not installed. Install it with: {classic}",
    ]
    assert missing[1][0] == "EnvNotFound"
    assert f"It is provided by sekai-classic, which is not installed: {classic}." in missing[1][1]
    assert missing[2] == ["ok", ""]
    # python -m sekai without the CLI names its wheel too.
    cli = venv.run(venv.python, "-m", "sekai", "list", cwd=work, check=False)
    assert cli.returncode == 2
    assert f"pip install {built_wheel('sekai-cli')}" in cli.stderr

    # The user runs the command the hint gave (with this venv's installer).
    command = re.search(r"Install it with: (pip install \S+)$", missing[0][1])
    assert command is not None
    venv.install(*command[1].split()[2:], cwd=work)
    habits = _python(
        venv,
        work,
        """
        print(json.dumps([
            outcome(lambda: sekai.make("CartPole-v1").reset(seed=0)),
            outcome(lambda: sekai.make("CartPole-v1", render_mode="rgb_array")),
            outcome(lambda: sekai.make("CartPole-v1").render()),
            outcome(lambda: sekai.make_vec("CartPole-v1", 2, vectorization_mode="native")),
        ]))
        """,
    )
    assert habits[0] == ["ok", ""]
    renderer = "from sekai.envs.classic_control import CartPoleRenderer"
    assert habits[1][0] == "TypeError" and renderer in habits[1][1]
    assert habits[2][0] == "AttributeError" and renderer in habits[2][1]
    assert habits[3][0] == "ValueError" and "classic/CartPole-v1 has one" in habits[3][1]
