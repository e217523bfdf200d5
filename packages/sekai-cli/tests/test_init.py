"""The ``sekai`` entry points: global options, help, -m imports, errors and broken pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import sekai
from sekai._providers import is_first_party, normalize_distribution
from sekai.cli import build_parser, main

COMMANDS = ("list", "info", "check", "bench")


def test_version_prints_sekai_and_the_version(sekai_cli) -> None:
    done = sekai_cli("--version")
    assert done.returncode == 0
    assert done.stdout == f"sekai {sekai.__version__}\n"


def test_version_is_that_of_every_installed_first_party_distribution() -> None:
    # sekai/_version.py and every pyproject.toml repeat the version: a release bump that misses
    # one of them must fail here instead of shipping distributions that disagree.
    assert sekai.__version__ == metadata.version("sekai-core")
    installed = {
        normalize_distribution(dist.metadata["Name"]): dist.version
        for dist in metadata.distributions()
        if is_first_party(dist.metadata["Name"] or "")
    }
    assert {"sekai-core", "sekai-cli"} <= set(installed)  # what this suite's venv holds
    assert {name: v for name, v in installed.items() if v != sekai.__version__} == {}


@pytest.mark.parametrize("module", ["sekai", "sekai.cli"])
def test_python_dash_m_runs_the_same_command_line(tmp_path: Path, module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "info", "CartPole-v1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("id=CartPole-v1\n")


def test_a_subcommand_is_required(sekai_cli) -> None:
    done = sekai_cli()
    assert done.returncode == 2
    assert "usage: sekai" in done.stderr
    assert "required" in done.stderr


def test_an_unknown_subcommand_is_a_usage_error(sekai_cli) -> None:
    done = sekai_cli("frobnicate")
    assert done.returncode == 2
    assert "invalid choice: 'frobnicate'" in done.stderr


@pytest.mark.parametrize("command", [(), *((c,) for c in COMMANDS)])
def test_help_of_every_command_shows_examples(sekai_cli, command: tuple[str, ...]) -> None:
    done = sekai_cli(*command, "--help")
    assert done.returncode == 0
    assert done.stdout.startswith(f"usage: sekai {' '.join(command)}".rstrip())
    assert "examples:\n  sekai " in done.stdout


def test_main_returns_the_exit_status_instead_of_exiting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sekai {sekai.__version__}\n"
    assert main([]) == 2


def test_build_parser_has_prog_sekai_and_the_four_commands() -> None:
    parser = build_parser()
    assert parser.prog == "sekai"
    choices: set[str] = set()
    for action in parser._actions:
        choices |= set(getattr(action, "choices", None) or ())
    assert set(COMMANDS) <= choices


# -- -m/--import ----------------------------------------------------------------------------


def test_import_option_registers_envs_of_a_module_in_the_current_directory(
    sekai_cli, my_envs: str
) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/Plain-v0")
    assert done.returncode == 0, done.stderr
    assert "id=mine/Plain-v0\n" in done.stdout
    assert done.stdout.endswith("provided_by=runtime\n")


def test_import_option_long_form_is_repeatable(sekai_cli, my_envs: str, tmp_path: Path) -> None:
    (tmp_path / "more_envs.py").write_text(
        "import sekai\nsekai.register('more/Line-v0', 'sekai.testing.envs:LineEnv')\n"
    )
    done = sekai_cli("--import", my_envs, "--import", "more_envs", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert '"id": "mine/Plain-v0"' in done.stdout
    assert '"id": "more/Line-v0"' in done.stdout


def test_import_of_a_missing_module_is_an_error_without_traceback(sekai_cli) -> None:
    done = sekai_cli("-m", "nosuch", "list")
    assert done.returncode == 2
    assert done.stderr == "error: could not import nosuch: No module named 'nosuch'\n"
    assert done.stdout == ""


@pytest.mark.parametrize("given", ["my_envs.py", "./my_envs.py", "sub/my_envs.py"])
def test_import_of_a_file_name_says_to_give_the_module_name_and_runs_nothing(
    sekai_cli, tmp_path: Path, given: str
) -> None:
    (tmp_path / "my_envs.py").write_text("print('imported')\n")
    done = sekai_cli("-m", given, "list")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "error: -m takes a module name, not a file: use -m my_envs (the current directory is on "
        "the import path)\n"
    )


def test_import_of_a_module_that_raises_names_the_exception(sekai_cli, tmp_path: Path) -> None:
    (tmp_path / "bad_envs.py").write_text("raise RuntimeError('half-written module')\n")
    done = sekai_cli("-m", "bad_envs", "list")
    assert done.returncode == 2
    assert done.stderr == ("error: could not import bad_envs: RuntimeError: half-written module\n")


# -- errors ---------------------------------------------------------------------------------


def test_an_unknown_id_prints_env_not_found_and_exits_2(sekai_cli) -> None:
    done = sekai_cli("info", "Cartpole-v1")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: Environment 'Cartpole-v1' not found in registry. Did you mean: 'CartPole-v1'?"
    )
    assert done.stderr.endswith("`sekai list` to see registered environments.\n")
    assert "Traceback" not in done.stderr


def test_an_invalid_id_is_reported_with_the_registry_message(sekai_cli) -> None:
    done = sekai_cli("check", "bad id!")
    assert done.returncode == 2
    assert done.stderr.startswith("error: Invalid env ID 'bad id!'. Must match")


@pytest.mark.parametrize("command", ["info", "check", "bench"])
def test_an_exception_from_the_env_constructor_is_shown_with_its_type(
    sekai_cli, my_envs: str, command: str
) -> None:
    done = sekai_cli("-m", my_envs, command, "mine/Broken-v0")
    assert done.returncode == 2
    assert done.stderr == "error: ValueError: bad size\n"


@pytest.mark.parametrize("command", ["info", "check", "bench"])
def test_an_abstract_env_class_is_shown_with_its_type(
    sekai_cli, my_envs: str, command: str
) -> None:
    # Before: Python raises it in C code called by the registry, so the registry's last frame
    # made it pass for the registry's own rejection of an argument, printed without its type.
    done = sekai_cli("-m", my_envs, command, "mine/Abstract-v0")
    assert done.returncode == 2
    assert done.stderr.startswith("error: TypeError: Can't instantiate abstract class Abstract ")


def test_a_registry_rejection_is_shown_without_a_type(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/BadKwargs-v0")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: mine/BadKwargs-v0: its entry point Plain does not take the keyword argument "
        "'size' (given: size): "
    )


def test_an_unimportable_entry_point_is_an_import_error_message(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "info", "mine/Lazy-v0")
    assert done.returncode == 2
    assert done.stderr == (
        "error: cannot import the module of mine/Lazy-v0 (entry point 'not_a_module_at_all:Env', "
        "registered at runtime, not by a plugin): ModuleNotFoundError: No module named "
        "'not_a_module_at_all'. Fix that module.\n"
    )


def test_plugin_load_warnings_are_not_shown_as_python_warnings(
    sekai_cli, fake_dists: dict[str, str]
) -> None:
    # Even with every warning turned into an error, discovery completes and the command runs.
    env = {**fake_dists, "PYTHONWARNINGS": "error"}
    done = sekai_cli("info", "CartPole-v1", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


# -- broken pipes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args", [["list"], ["list", "--json"], ["--help"], ["info", "CartPole-v1"]]
)
def test_a_closed_stdout_pipe_exits_quietly(sekai_cli, args: list[str]) -> None:
    done = _with_stdout_closed(sekai_cli, *args)
    assert done.stderr == ""
    assert done.returncode == 0


def _with_stdout_closed(
    sekai_cli, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI with the reader of its stdout gone before the first write: where
    `sekai list | head -1` ends up."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return sekai_cli(*args, stdout=write_end, env=env)
    finally:
        os.close(write_end)


# Each write reaches the pipe at once (PYTHONUNBUFFERED=1, common in CI), or at the end.
_BUFFERING = [{"PYTHONUNBUFFERED": "1"}, {"PYTHONUNBUFFERED": ""}]


@pytest.mark.parametrize("buffering", _BUFFERING)
def test_a_failed_check_exits_1_when_stdout_closes_under_its_report(
    sekai_cli, my_envs: str, buffering: dict[str, str]
) -> None:
    args = ("-m", my_envs, "check", "mine/OutOfSpace-v0", "--steps", "20")
    done = _with_stdout_closed(sekai_cli, *args, env=buffering)
    assert (done.returncode, done.stderr) == (1, "")


@pytest.mark.parametrize("buffering", _BUFFERING)
def test_list_strict_exits_1_for_a_failed_plugin_when_stdout_closes(
    sekai_cli, fake_dists: dict[str, str], buffering: dict[str, str]
) -> None:
    done = _with_stdout_closed(sekai_cli, "list", "--strict", env={**fake_dists, **buffering})
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


def test_an_error_after_some_output_is_still_reported_when_stdout_closes(
    sekai_cli, tmp_path: Path
) -> None:
    (tmp_path / "noisy.py").write_text('print("loading")\nraise RuntimeError("bad config")\n')
    done = _with_stdout_closed(sekai_cli, "-m", "noisy", "list", env=_BUFFERING[1])
    assert done.returncode == 2
    assert done.stderr == "error: could not import noisy: RuntimeError: bad config\n"


def test_a_closed_stdout_descriptor_exits_quietly(sekai_shell) -> None:
    # Python starts with sys.stdout = None when descriptor 1 is closed.
    done = sekai_shell("sekai list >&-")
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(
    ("command", "code"), [("--version", 0), ("bench CartPole-v1 --steps 0", 2)]
)
def test_version_and_usage_errors_keep_their_exit_code_with_stdout_closed(
    sekai_shell, command: str, code: int
) -> None:
    done = sekai_shell(f"sekai {command} >&-")
    assert done.returncode == code
    assert "Traceback" not in done.stderr


def test_list_piped_to_head_prints_the_header_and_nothing_on_stderr(sekai_shell) -> None:
    done = sekai_shell("sekai list | head -1")
    assert done.stdout.split() == ["ID", "MAX", "STEPS", "ENTRY", "POINT"]
    assert done.stderr == ""
