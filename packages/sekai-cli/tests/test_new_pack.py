"""``sekai new-pack``: the pack it writes is complete, conforms, and names what to run next."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import sekai
from sekai.cli import main
from sekai.cli._args import UsageError
from sekai.cli._new_pack import pack_names, write_pack
from sekai.testing import assert_env_conforms, registry_sandbox

FILES = [
    "pyproject.toml",
    "README.md",
    "src/sekai_mazes/__init__.py",
    "src/sekai_mazes/py.typed",
    "src/sekai_mazes/_plugin.py",
    "src/sekai_mazes/walk.py",
    "tests/test_walk.py",
]


@pytest.fixture
def importable(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path``, with ``tmp_path/sekai-mazes/src`` importable (as an editable install is)."""
    src = str(tmp_path / "sekai-mazes" / "src")
    sys.path.insert(0, src)
    yield tmp_path
    sys.path.remove(src)
    for name in [m for m in sys.modules if m.split(".")[0] == "sekai_mazes"]:
        del sys.modules[name]


def test_the_command_writes_every_file_and_says_what_to_run_next(sekai_cli, tmp_path) -> None:
    done = sekai_cli("new-pack", "sekai-mazes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        *(f"wrote sekai-mazes/{name}" for name in FILES),
        "",
        "mazes/Walk-v0 is registered by the plugin 'mazes'. Next:",
        "  pip install -e ./sekai-mazes",
        "  pytest sekai-mazes",
        "  sekai list --plugins",
    ]
    assert sorted(
        p.relative_to(tmp_path / "sekai-mazes").as_posix()
        for p in (tmp_path / "sekai-mazes").rglob("*")
        if p.is_file()
    ) == sorted(FILES)


def test_an_absolute_folder_is_named_as_pip_reads_it(sekai_cli, tmp_path) -> None:
    folder = tmp_path / "packs" / "sekai-mazes"
    done = sekai_cli("new-pack", str(folder))
    assert done.returncode == 0, done.stderr
    assert f"  pip install -e {folder.as_posix()}" in done.stdout.splitlines()
    assert (folder / "pyproject.toml").is_file()


def test_the_pyproject_declares_the_entry_point_and_the_tested_sekai_core(tmp_path) -> None:
    write_pack(tmp_path / "sekai-mazes", namespace="maze")
    pyproject = (tmp_path / "sekai-mazes" / "pyproject.toml").read_text()
    assert '[project.entry-points.sekai]\nmaze = "sekai_mazes._plugin"' in pyproject
    major, minor = sekai.__version__.split(".")[:2]
    assert f'"sekai-core~={major}.{minor}.0"' in pyproject


@pytest.mark.parametrize("native", [False, True])
def test_the_written_plugin_registers_a_conforming_env(importable: Path, native: bool) -> None:
    write_pack(importable / "sekai-mazes", native=native)
    plugin = importlib.import_module("sekai_mazes._plugin")
    with registry_sandbox(("mazes", plugin), distribution="sekai-mazes", version="0.1.0"):
        spec = sekai.spec("mazes/Walk-v0")
        assert (spec.vector_entry_point is not None) == native
        assert_env_conforms("mazes/Walk-v0")
        if native:
            vec = sekai.make_vec("mazes/Walk-v0", 3)
            assert type(vec).__name__ == "WalkVecEnv"
            vec.close()


@pytest.mark.parametrize("native", [False, True])
def test_the_written_envs_refuse_options_they_cannot_use(importable: Path, native: bool) -> None:
    write_pack(importable / "sekai-mazes", native=native)
    walk = importlib.import_module("sekai_mazes.walk")
    env = walk.WalkEnv(size=3)
    with pytest.raises(TypeError, match="options must be a dict or None, got list"):
        env.reset(options=["start"])
    with pytest.raises(ValueError, match=r"options\['start'\] must be an int in 0..2, got 3"):
        env.reset(options={"start": 3})
    assert env.reset(options={"start": 2}).observation.tolist() == [2]
    env.reset(seed=0)
    before = env.rng.bit_generator.state
    with pytest.raises(ValueError, match=r"got 3"):
        env.reset(seed=1, options={"start": 3})  # refused before seeding
    assert env.rng.bit_generator.state == before
    if native:  # checked before anything is seeded; the valid sub-envs are reset
        vec = walk.WalkVecEnv(2, size=3)
        vec.reset(seed=0, options={"start": 0})
        with pytest.raises(ValueError, match=r"got True") as caught:
            vec.reset(seed=1, options=[{"start": 2}, {"start": True}])
        assert caught.value.__notes__ == ["raised by sub-env 1, reset with reset(options=...)[1]"]
        assert vec.position.tolist() == [2, 0]
        before = vec.rng.bit_generator.state
        with pytest.raises(ValueError, match=r"got 3"):
            vec.reset(seed=2, options={"start": 3})  # refused by every sub-env
        assert vec.rng.bit_generator.state == before  # nothing seeded
        assert vec.reset(options=[{"start": 0}, None]).observations[0].tolist() == [0]


def test_the_written_tests_cover_the_native_env_only_with_native(tmp_path) -> None:
    write_pack(tmp_path / "plain")
    write_pack(tmp_path / "native", native=True)
    assert "WalkVecEnv" not in (tmp_path / "plain" / "tests" / "test_walk.py").read_text()
    assert (
        "def test_native_and_single_env_agree"
        in (tmp_path / "native" / "tests" / "test_walk.py").read_text()
    )


def test_names_follow_the_pack_convention() -> None:
    assert pack_names("sekai-mazes", None) == ("sekai-mazes", "sekai_mazes", "mazes")
    assert pack_names("my--envs.-x", "mine")[1] == "my_envs_x"  # a run is one "_"
    assert pack_names("my.envs", "mine") == ("my.envs", "my_envs", "mine")
    assert pack_names("sekai-foo.bar", None) == ("sekai-foo.bar", "sekai_foo_bar", "foo-bar")


@pytest.mark.parametrize(
    ("name", "namespace", "message"),
    [
        ("sekai-finance", None, "one of sekai's own distributions"),
        ("Sekai", None, "^Sekai is one of sekai's own distributions"),  # the meta-distribution
        ("sekai-ray2", "classic", r"^the namespace 'classic' is reserved for sekai-classic; "),
        # Before: accepted, though 'Classic' is a look-alike of the first-party namespace.
        ("sekai-x", "Classic", r"reserved for sekai-classic \(as 'classic', in any case\)"),
        ("-bad", None, "NAME must be a distribution name"),
        ("sekai-x", "a/b", "--namespace must match"),
        ("class", None, "not a valid one"),
    ],
)
def test_names_pip_or_the_registry_would_refuse_are_usage_errors(name, namespace, message) -> None:
    with pytest.raises(UsageError, match=message):
        pack_names(name, namespace)


@pytest.mark.parametrize("name", ["json", "os", "typing", "Test", "py.compile"])
def test_an_import_package_of_the_standard_library_is_refused(name: str) -> None:
    # Before: written, with a plugin that could never load (the stdlib module always wins)
    package = name.lower().replace(".", "_")
    with pytest.raises(UsageError) as info:
        pack_names(name, None)
    assert str(info.value) == (
        f"NAME {name!r} gives the import package {package!r}, a module of Python's standard "
        f"library, which would always be imported instead; choose another NAME, for example "
        f"sekai-{name}"
    )
    assert pack_names(f"sekai-{name}", None)[1] == f"sekai_{package}"


@pytest.mark.parametrize(
    ("name", "required", "kind"),
    [("numpy", "numpy", "run"), ("PyTest", "pytest", "test"), ("hatchling", "hatchling", "build")],
)
def test_an_import_package_named_after_a_requirement_of_the_pack_is_refused(
    tmp_path: Path, name: str, required: str, kind: str
) -> None:
    # Before: `pip install -e ./numpy` would have replaced the pack's own numpy
    with pytest.raises(UsageError) as info:
        pack_names(name, None)
    assert str(info.value) == (
        f"NAME {name!r} gives the import package {name.lower()!r}, the name of {required}, one of "
        f"the pack's {kind} requirements, which installing the pack would replace; choose "
        f"another NAME, for example sekai-{name}"
    )
    write_pack(tmp_path / "sekai-mazes")  # each requirement refused is one the pack has
    pyproject = (tmp_path / "sekai-mazes" / "pyproject.toml").read_text()
    assert f'"{required}' in pyproject


@pytest.mark.parametrize("name", ["sekai--mazes", "sekai_.mazes", "sekai-.mazes"])
def test_a_derived_namespace_that_starts_with_a_dash_is_refused(name: str) -> None:
    # Before: '-mazes', whose IDs `sekai list --namespace -mazes` read as an option
    with pytest.raises(UsageError) as info:
        pack_names(name, None)
    assert str(info.value) == (
        f"the namespace derived from NAME {name!r} must match [a-zA-Z0-9_-]+ and not start "
        "with '-' (the command line would read it as an option), got '-mazes'; pass one with "
        "--namespace"
    )
    assert pack_names(name, "mazes")[2] == "mazes"


def test_a_namespace_given_that_starts_with_a_dash_is_refused() -> None:
    with pytest.raises(UsageError, match=r"^--namespace must match .* got '-x'$"):
        pack_names("sekai-x", "-x")


def test_new_pack_refuses_a_name_that_cannot_work_with_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new-pack", "json"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: NAME 'json' gives the import package 'json', a module of Python's standard library"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", [".", "..", "sekai-mazes/.."])
def test_a_name_that_leaves_no_folder_name_says_what_name_is(sekai_cli, name) -> None:
    # Before: "NAME must be a distribution name (...), got ''" for '.'.
    done = sekai_cli("new-pack", name)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: NAME is the new folder to write the pack into, named after the distribution, "
        f"got {name!r}; for example sekai-mazes\n"
    )


def test_the_help_states_how_the_default_namespace_is_derived(sekai_cli) -> None:
    assert pack_names("sekai-Grid.Worlds", None)[2] == "grid-worlds"
    assert pack_names("Sekai_Grid.Worlds", None)[2] == "grid-worlds"
    done = sekai_cli("new-pack", "--help")
    assert (
        "(default: the distribution name without its sekai- prefix (or sekai_, sekai., in any "
        "case), in lower case, with '.' turned into '-')" in " ".join(done.stdout.split())
    )


def test_an_existing_folder_is_never_overwritten(sekai_cli, tmp_path) -> None:
    (tmp_path / "sekai-mazes").mkdir()
    done = sekai_cli("new-pack", "sekai-mazes")
    assert done.returncode == 2
    assert done.stderr == "error: sekai-mazes already exists; choose another NAME or remove it\n"
    assert list((tmp_path / "sekai-mazes").iterdir()) == []


def test_the_written_native_env_leaves_a_frozen_sub_env_where_it_ended(importable: Path) -> None:
    write_pack(importable / "sekai-mazes", native=True)
    walk = importlib.import_module("sekai_mazes.walk")
    vec = walk.WalkVecEnv(2, size=50, autoreset=False, max_episode_steps=1)
    vec.reset(options={"start": 10})
    assert vec.step(np.array([0, 1])).truncated.tolist() == [True, True]
    vec.step(np.array([1, 0]))  # both frozen: stepped again with their last actions
    assert vec.position.tolist() == [9, 11]


@pytest.mark.parametrize("native", [False, True])
def test_the_written_tests_pass_as_written(tmp_path: Path, native: bool) -> None:
    # All but the one that needs the pack installed (its entry point): the rest import src/.
    folder = tmp_path / "sekai-mazes"
    write_pack(folder, native=native)
    path = os.pathsep.join([str(folder / "src"), *sys.path])
    plugins = ["-p", "no:randomly", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, "-k", "not installed", "tests"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{8 if native else 6} passed, 1 deselected" in done.stdout
