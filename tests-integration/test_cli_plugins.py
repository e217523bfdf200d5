"""``sekai list --plugins`` and friends against installed wheels, the example and broken packs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

BROKEN_ERROR = "ModuleNotFoundError: No module named 'not_a_real_dependency'"
BROKEN_NOTE = (
    "warning: 1 plugin failed to load (broken: sekai-broken-pack 0.1.0); see sekai list --plugins\n"
)


def _sekai(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this venv's ``sekai`` console script in ``tmp_path`` (nothing of the checkout on it)."""
    script = shutil.which("sekai", path=sysconfig.get_path("scripts")) or shutil.which(
        "sekai", path=str(Path(sys.executable).parent)
    )
    assert script is not None, "the sekai-cli wheel installs a `sekai` console script"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "NO_COLOR", "SEKAI_DISABLE_PLUGINS"}
    }
    return subprocess.run(
        [script, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _rows(stdout: str) -> dict[str, list[str]]:
    """The ``--plugins`` table by distribution: [plugin, distribution, version, envs, status]."""
    lines = stdout.splitlines()
    assert lines[0].split() == ["PLUGIN", "DISTRIBUTION", "VERSION", "ENVS", "STATUS"]
    return {line.split()[1]: line.split(None, 4) for line in lines[1:]}


@pytest.mark.full
def test_list_plugins_shows_the_example_pack_and_the_broken_pack(
    tmp_path: Path, install_command: Callable[[str], str]
) -> None:
    done = _sekai(tmp_path, "list", "--plugins")
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    assert rows["sekai-example-pack"] == ["example", "sekai-example-pack", "0.1.0", "1", "ok"]
    assert rows["sekai-broken-pack"] == [
        "broken",
        "sekai-broken-pack",
        "0.1.0",
        "0",
        f"failed (import): {BROKEN_ERROR}",
    ]
    assert rows["sekai-core"] == [
        "core",
        "sekai-core",
        "0.3.0",
        "0",
        "ok (vector backends: sync, async, proc)",
    ]
    assert rows["sekai-classic"][3:] == ["10", "ok"]
    # Every first-party distribution of the full profile is installed; sekai-ray, sekai-jax and
    # sekai-torch never are here (their own sessions install them).
    missing = {dist for dist, row in rows.items() if row[0] == "-"}
    assert missing == {"sekai-ray", "sekai-jax", "sekai-torch"}
    for dist in sorted(missing):
        assert rows[dist][4] == f"not installed: {install_command(dist)}"


@pytest.mark.full
def test_list_plugins_json_agrees_with_the_spec_listing(tmp_path: Path) -> None:
    plugins = json.loads(_sekai(tmp_path, "list", "--plugins", "--json").stdout)
    specs = json.loads(_sekai(tmp_path, "list", "--json").stdout)
    for row in plugins:
        if row["status"] == "ok":
            owned = [s["id"] for s in specs if s["plugin"] == row["plugin"]]
            assert sorted(row["envs"]) == sorted(owned), row["plugin"]
    broken = next(row for row in plugins if row["plugin"] == "broken")
    assert broken["status"] == "failed (import)"
    assert broken["error"] == BROKEN_ERROR


@pytest.mark.full
def test_list_shows_the_pack_env_and_notes_the_broken_plugin_on_stderr(tmp_path: Path) -> None:
    done = _sekai(tmp_path, "list")
    assert done.returncode == 0
    assert done.stderr == BROKEN_NOTE
    row = next(line for line in done.stdout.splitlines() if line.startswith("example/"))
    assert row.split() == [
        "example/Gridworld-v0",
        "100",
        "sekai_example_pack.gridworld:GridworldEnv",
        "[native",
        "vec]",
        "[kernel]",
    ]
    assert _sekai(tmp_path, "list", "--strict").returncode == 1


@pytest.mark.full
def test_info_names_the_pack_and_a_broken_plugins_id_names_the_failure(tmp_path: Path) -> None:
    info = _sekai(tmp_path, "info", "example/Gridworld-v0")
    assert info.returncode == 0, info.stderr
    assert info.stdout.splitlines()[-1] == ("provided_by=sekai-example-pack 0.1.0 (plugin example)")
    broken = _sekai(tmp_path, "info", "broken/Thing-v0")
    assert broken.returncode == 2
    assert broken.stderr.startswith("error: Environment 'broken/Thing-v0' not found in registry.")
    assert (
        f"Plugin 'broken' (sekai-broken-pack 0.1.0) failed to load: {BROKEN_ERROR}."
        in broken.stderr
    )
    assert "Traceback" not in broken.stderr


@pytest.mark.minimal
def test_list_plugins_names_each_missing_first_party_distribution(
    tmp_path: Path, install_command: Callable[[str], str]
) -> None:
    done = _sekai(tmp_path, "list", "--plugins")
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    for dist in ("sekai-classic", "sekai-finance", "sekai-compat", "sekai-ray"):
        assert rows[dist] == ["-", dist, "-", "-", f"not installed: {install_command(dist)}"]
    assert rows["sekai-example-pack"][3:] == ["1", "ok"]
    assert rows["sekai-broken-pack"][4] == f"failed (import): {BROKEN_ERROR}"
