"""``sekai list``: the spec table, --namespace, --json, --plugins, --strict and the failure note."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sekai._providers import install_command

CARTPOLE_ENTRY = "sekai.envs.classic_control.cartpole:CartPoleEnv"
PENDULUM_ENTRY = "sekai.envs.classic_control.pendulum:PendulumEnv"
BROKEN_NOTE = (
    "warning: 1 plugin failed to load (fakebroken: sekai-fake-broken 0.1.0); "
    "see sekai list --plugins\n"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_table_columns_follow_the_spec_layout(sekai_cli) -> None:
    listed = json.loads(sekai_cli("list", "--json").stdout)
    width = max(len(row["id"]) for row in listed)
    lines = sekai_cli("list").stdout.splitlines()
    assert lines[0] == f"{'ID':<{width}}  MAX STEPS  ENTRY POINT"
    assert f"{'CartPole-v1':<{width}}        500  {CARTPOLE_ENTRY}  [kernel]" in lines
    native = f"{CARTPOLE_ENTRY}  [native vec]  [kernel]"
    assert f"{'classic/CartPole-v1':<{width}}        500  {native}" in lines
    assert f"{'Pendulum-v1':<{width}}        200  {PENDULUM_ENTRY}" in lines
    assert all(not line.endswith(" ") for line in lines)


def test_table_is_sorted_by_id_and_lists_every_spec(sekai_cli, my_envs: str) -> None:
    listed = json.loads(sekai_cli("-m", my_envs, "list", "--json").stdout)
    ids = [line.split()[0] for line in sekai_cli("-m", my_envs, "list").stdout.splitlines()[1:]]
    assert ids == sorted(row["id"] for row in listed)
    assert ids == sorted(ids)


def test_max_steps_is_a_dash_without_a_time_limit_and_callables_show_their_repr(
    sekai_cli, my_envs: str
) -> None:
    lines = sekai_cli("-m", my_envs, "list", "--namespace", "mine").stdout.splitlines()
    assert lines[0] == "ID                  MAX STEPS  ENTRY POINT"
    assert "mine/Plain-v0               -  <class 'my_envs.Plain'>" in lines
    assert "mine/Line-v0               20  sekai.testing.envs:LineEnv  [native vec]" in lines


def test_native_vec_is_read_from_the_spec_without_importing_the_env_module(
    sekai_cli, my_envs: str
) -> None:
    # mine/Lazy-v0 names a module that does not exist: importing it would fail.
    done = sekai_cli("-m", my_envs, "list", "--namespace", "mine")
    assert done.returncode == 0, done.stderr
    assert "mine/Lazy-v0                -  not_a_module_at_all:Env  [native vec]" in done.stdout


def test_namespace_selects_one_namespace(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "list", "--namespace", "classic")
    ids = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert ids
    assert all(env_id.startswith("classic/") for env_id in ids)


def test_empty_namespace_selects_ids_without_a_namespace(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "list", "--namespace", "")
    ids = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert "CartPole-v1" in ids
    assert all("/" not in env_id for env_id in ids)


def test_unknown_namespace_says_so(sekai_cli) -> None:
    done = sekai_cli("list", "--namespace", "nope")
    assert done.returncode == 0
    assert done.stdout == "No environments in namespace 'nope'.\n"


def test_an_empty_registry_says_so(sekai_cli) -> None:
    done = sekai_cli("list", env={"SEKAI_DISABLE_PLUGINS": "*"})
    assert done.returncode == 0
    assert done.stdout == "No environments registered.\n"
    assert done.stderr == ""


def test_json_has_one_object_per_spec_with_provenance(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "list", "--json")
    assert done.returncode == 0
    rows = {row["id"]: row for row in json.loads(done.stdout)}
    assert rows["classic/CartPole-v1"] == {
        "id": "classic/CartPole-v1",
        "max_episode_steps": 500,
        "entry_point": CARTPOLE_ENTRY,
        "vector_entry_point": "sekai.envs.classic_control.vector.cartpole:CartPoleVecEnv",
        "native_vec": True,
        "kernel_entry_point": "sekai.envs.classic_control.kernels.cartpole:CartPoleKernel",
        "plugin": "classic",
        "distribution": "sekai-classic",
        "version": "0.3.0",
    }
    assert rows["mine/Plain-v0"] == {
        "id": "mine/Plain-v0",
        "max_episode_steps": None,
        "entry_point": "<class 'my_envs.Plain'>",
        "vector_entry_point": None,
        "native_vec": False,
        "kernel_entry_point": None,
        "plugin": None,
        "distribution": None,
        "version": None,
    }


def test_json_respects_the_namespace(sekai_cli, my_envs: str) -> None:
    rows = json.loads(sekai_cli("-m", my_envs, "list", "--json", "--namespace", "mine").stdout)
    assert rows
    assert {row["id"].split("/")[0] for row in rows} == {"mine"}
    assert json.loads(sekai_cli("list", "--json", "--namespace", "nope").stdout) == []


# -- plugins ----------------------------------------------------------------------------------


def test_plugins_table_shows_every_plugin_failure_and_missing_distribution(
    sekai_cli, fake_dists: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where sekai_cli runs: the hint's path is relative to it
    done = sekai_cli("list", "--plugins", env=fake_dists)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    rows = {line.split()[0] + " " + line.split()[1]: line for line in lines[1:]}
    assert lines[0].split() == ["PLUGIN", "DISTRIBUTION", "VERSION", "ENVS", "STATUS"]
    assert rows["core sekai-core"].split(None, 4)[2:] == [
        "0.3.0",
        "0",
        "ok (vector backends: sync, async, proc)",
    ]
    assert rows["classic sekai-classic"].split()[2:] == ["0.3.0", "10", "ok"]
    assert rows["fake sekai-fake-pack"].split()[2:] == ["0.1.0", "1", "ok"]
    assert rows["fakebroken sekai-fake-broken"].split(None, 4)[2:] == [
        "0.1.0",
        "0",
        "failed (import): ModuleNotFoundError: No module named 'not_a_real_dependency'",
    ]
    assert rows["- sekai-ray"].split(None, 4)[2:] == [
        "-",
        "-",
        f"not installed: {install_command('sekai-ray')}",
    ]
    # Loaded plugins first (core first), then failures, then missing distributions.
    assert lines[1].startswith("core ")
    assert lines.index(rows["fakebroken sekai-fake-broken"]) > lines.index(
        rows["fake sekai-fake-pack"]
    )
    assert lines[-1].startswith("- ")


def test_plugins_table_columns_align(sekai_cli, fake_dists: dict[str, str]) -> None:
    lines = sekai_cli("list", "--plugins", env=fake_dists).stdout.splitlines()
    header = lines[0]
    starts = [header.index(title) for title in ("DISTRIBUTION", "VERSION", "STATUS")]
    envs_end = header.index("ENVS") + len("ENVS")
    for line in lines[1:]:
        for start in starts:
            assert line[start - 2 : start] == "  " and line[start] != " ", line
        assert line[envs_end - 1] != " " and line[envs_end : envs_end + 2] == "  ", line


def test_plugins_json_has_one_object_per_row(sekai_cli, fake_dists: dict[str, str]) -> None:
    done = sekai_cli("list", "--plugins", "--json", env=fake_dists)
    rows = {row["distribution"]: row for row in json.loads(done.stdout)}
    assert rows["sekai-fake-pack"] == {
        "plugin": "fake",
        "distribution": "sekai-fake-pack",
        "version": "0.1.0",
        "envs": ["fake/Line-v0"],
        "status": "ok",
        "error": None,
        "backends": [],
    }
    assert rows["sekai-core"]["backends"] == ["sync", "async", "proc"]
    assert rows["sekai-fake-broken"]["status"] == "failed (import)"
    assert rows["sekai-fake-broken"]["error"] == (
        "ModuleNotFoundError: No module named 'not_a_real_dependency'"
    )
    assert rows["sekai-ray"]["status"] == "not installed"
    assert rows["sekai-ray"]["plugin"] is None


FAKE_MODE = """
from sekai.plugins import hookimpl


@hookimpl
def sekai_register_vector_backends(registry):
    registry.register("fakemode", "sekai.vector:SyncVecEnv")
"""


def test_a_plugin_whose_declared_library_is_missing_is_not_ok_and_says_what_to_install(
    sekai_cli, fake_dist
) -> None:
    # as sekai-ray installed with --no-deps: the plugin loads, its mode fails when used
    env = fake_dist("sekai-fake-mode", "fakemode", "sekai_fake_mode_plugin", FAKE_MODE,
                    requires=("rayish>=2.9", "numpy>=2.0"))  # fmt: skip
    lines = sekai_cli("list", "--plugins", env=env).stdout.splitlines()
    row = next(line for line in lines if line.startswith("fakemode"))
    assert row.split(None, 4)[2:] == [
        "0.1.0",
        "0",
        "missing rayish>=2.9 (vector backends: fakemode): pip install 'rayish>=2.9'",
    ]
    rows = json.loads(sekai_cli("list", "--plugins", "--json", env=env).stdout)
    assert next(r for r in rows if r["plugin"] == "fakemode") == {
        "plugin": "fakemode",
        "distribution": "sekai-fake-mode",
        "version": "0.1.0",
        "envs": [],
        "status": "missing dependency",
        "error": "rayish>=2.9 is not installed: pip install 'rayish>=2.9'",
        "backends": ["fakemode"],
    }
    done = sekai_cli("bench", "CartPole-v1", "--steps", "10", "--num-envs", "2", "--mode",
                     "fakemode", env=env)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "error: vectorization_mode 'fakemode' needs rayish, which is not installed: "
        "sekai-fake-mode, which provides the mode, depends on it. Install it with: "
        "pip install 'rayish>=2.9'\n"
    )


def test_a_disabled_plugin_is_shown_but_is_no_failure(
    sekai_cli, fake_dists: dict[str, str]
) -> None:
    env = {**fake_dists, "SEKAI_DISABLE_PLUGINS": "fakebroken"}
    done = sekai_cli("list", "--plugins", "--strict", env=env)
    assert done.returncode == 0
    row = next(line for line in done.stdout.splitlines() if line.startswith("fakebroken"))
    assert row.endswith("disabled by SEKAI_DISABLE_PLUGINS")
    assert sekai_cli("list", env=env).stderr == ""


def test_a_failed_plugin_prints_one_note_on_stderr(sekai_cli, fake_dists: dict[str, str]) -> None:
    done = sekai_cli("list", env=fake_dists)
    assert done.returncode == 0
    assert done.stderr == BROKEN_NOTE
    assert "fake/Line-v0" in done.stdout


def test_strict_exits_1_when_a_plugin_failed(sekai_cli, fake_dists: dict[str, str]) -> None:
    assert sekai_cli("list", "--strict", env=fake_dists).returncode == 1
    assert sekai_cli("list", "--plugins", "--strict", env=fake_dists).returncode == 1


def test_strict_exits_0_when_every_plugin_loaded(sekai_cli) -> None:
    done = sekai_cli("list", "--strict")
    assert done.returncode == 0
    assert done.stderr == ""


# -- colour -----------------------------------------------------------------------------------


def test_colour_only_on_a_terminal(sekai_cli, terminal_cli) -> None:
    assert not ANSI.search(sekai_cli("list").stdout)
    code, out, _ = terminal_cli("list", stream="stdout")
    assert code == 0
    assert "\x1b[1mID\x1b[0m" in out
    assert "\x1b[36m[native vec]\x1b[0m" in out
    # Colour codes never shift the columns.
    plain = ANSI.sub("", out).replace("\r\n", "\n")
    assert plain == sekai_cli("list").stdout


@pytest.mark.parametrize("value", ["1", ""])
def test_no_color_disables_colour_on_a_terminal(terminal_cli, value: str) -> None:
    code, out, _ = terminal_cli("list", "--plugins", stream="stdout", env={"NO_COLOR": value})
    assert code == 0
    assert "PLUGIN" in out
    assert not ANSI.search(out)


FAKE_PACK = """
from sekai.plugins import hookimpl


@hookimpl
def sekai_register_envs(registry):
    registry.register("fake/Line-v0", "sekai.testing.envs:LineEnv")
"""

# A plugin module failing in its own import-time code, not for a missing dependency.
RAISING_PLUGINS = {
    "runtime-error": (
        'raise RuntimeError("needs a licence key")\n',
        "RuntimeError: needs a licence key",
    ),
    "syntax-error": ("def register(:\n    pass\n", "SyntaxError: "),
    "import-time-code": ('import json\nSETTINGS = json.loads("{")\n', "JSONDecodeError: "),
}


@pytest.mark.parametrize("kind", list(RAISING_PLUGINS))
def test_a_plugin_raising_any_exception_at_import_is_listed_as_failed_and_the_others_load(
    sekai_cli, fake_dist, kind: str
) -> None:
    source, error = RAISING_PLUGINS[kind]
    fake_dist("sekai-fake-pack", "fake", "sekai_fake_pack_plugin", FAKE_PACK)
    env = fake_dist("sekai-fake-raising", "fakeraising", "sekai_fake_raising_plugin", source)
    done = sekai_cli("list", "--plugins", "--json", env=env)
    assert done.returncode == 0, done.stderr
    rows = {row["distribution"]: row for row in json.loads(done.stdout)}
    assert rows["sekai-fake-pack"]["status"] == "ok"
    assert rows["sekai-fake-raising"]["status"] == "failed (import)"
    assert rows["sekai-fake-raising"]["error"].startswith(error)
    made = sekai_cli("info", "fakeraising/Thing-v0", env=env)
    assert made.returncode == 2
    assert (
        "Plugin 'fakeraising' (sekai-fake-raising 0.1.0) failed to load: " + error
    ) in made.stderr


def test_namespace_with_plugins_is_a_usage_error(sekai_cli) -> None:
    done = sekai_cli("list", "--plugins", "--namespace", "classic")
    assert done.returncode == 2
    assert "--namespace applies to the environment table, not to --plugins" in done.stderr
