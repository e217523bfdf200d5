"""A broken third-party pack: reported once, with its distribution, and never in the way."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

BROKEN_WARNING = (
    "sekai plugin 'broken' (sekai-broken-pack 0.1.0) failed to load and was skipped: "
    "ModuleNotFoundError: No module named 'not_a_real_dependency'. "
    "Set SEKAI_DISABLE_PLUGINS=broken to silence this."
)


def both_profiles(test):
    """Mark ``test`` for the full and the minimal profile."""
    return pytest.mark.full(pytest.mark.minimal(test))


def run(code, *args, **env):
    environ = {k: v for k, v in os.environ.items() if k != "SEKAI_DISABLE_PLUGINS"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )


def run_json(code, *args, **env):
    proc = run(code, *args, **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


CAPTURE = """
import json, warnings
import sekai

def captured(operation):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        operation()
    return [(w.category.__name__, str(w.message)) for w in caught]
"""


@both_profiles
def test_the_broken_pack_gives_exactly_one_plugin_load_warning_and_others_load():
    out = run_json(
        CAPTURE
        + """
first = captured(sekai.all_specs)
again = captured(lambda: sekai.make("example/Gridworld-v0"))
ids = [s.id for s in sekai.all_specs()]
print(json.dumps([first, again, ids]))
"""
    )
    first, again, ids = out
    assert first == [["PluginLoadWarning", BROKEN_WARNING]]
    assert again == []
    assert "example/Gridworld-v0" in ids
    assert not any(i.startswith("broken/") for i in ids)


@both_profiles
def test_the_report_records_the_broken_pack_as_an_import_failure():
    out = run_json(
        CAPTURE
        + """
report = captured(lambda: None) or sekai.plugins.report()
print(json.dumps([[f.name, f.distribution, f.version, f.stage, f.error] for f in report.failures]))
"""
    )
    assert out == [
        [
            "broken",
            "sekai-broken-pack",
            "0.1.0",
            "import",
            "ModuleNotFoundError: No module named 'not_a_real_dependency'",
        ]
    ]


@both_profiles
def test_make_of_a_broken_pack_id_names_the_failed_plugin():
    out = run_json(
        CAPTURE
        + """
warnings.simplefilter("ignore")
try:
    sekai.make("broken/Thing-v0")
except sekai.EnvNotFound as exc:
    print(json.dumps([str(exc), [f.name for f in exc.failures], exc.provider]))
"""
    )
    assert out == [
        "Environment 'broken/Thing-v0' not found in registry. Plugin 'broken' "
        "(sekai-broken-pack 0.1.0) failed to load: ModuleNotFoundError: No module named "
        "'not_a_real_dependency'. Reinstall it or add the missing dependency. Use "
        "sekai.all_specs() or `sekai list` to see registered environments.",
        ["broken"],
        None,
    ]


@both_profiles
def test_disabling_the_broken_pack_silences_it_and_says_so_for_its_ids():
    out = run_json(
        CAPTURE
        + """
first = captured(sekai.all_specs)
try:
    sekai.make("broken/Thing-v0")
except sekai.EnvNotFound as exc:
    message = str(exc)
stages = [f.stage for f in sekai.plugins.report().failures]
print(json.dumps([first, message, stages]))
""",
        SEKAI_DISABLE_PLUGINS="broken",
    )
    first, message, stages = out
    assert first == []
    assert "Plugin 'broken' is disabled by SEKAI_DISABLE_PLUGINS." in message
    assert stages == ["disabled"]


@both_profiles
def test_import_sekai_never_fails_even_with_warnings_as_errors():
    proc = run("import sekai, sekai.envs; print(sekai.__version__)", "-W", "error")
    assert (proc.returncode, proc.stdout.strip()) == (0, "0.3.0")


@both_profiles
def test_warnings_as_errors_raise_only_after_every_plugin_was_loaded():
    out = run_json(
        """
import json, warnings
import sekai
warnings.simplefilter("error", sekai.PluginLoadWarning)
try:
    sekai.make("example/Gridworld-v0")
except sekai.PluginLoadWarning as exc:
    raised = str(exc)
env = sekai.make("example/Gridworld-v0")
print(json.dumps([raised, str(env)]))
"""
    )
    assert out == [BROKEN_WARNING, "<TimeLimit(<example/Gridworld-v0>)>"]


def sekai_cli(*args):
    environ = {k: v for k, v in os.environ.items() if k != "SEKAI_DISABLE_PLUGINS"}
    return subprocess.run(
        [sys.executable, "-m", "sekai", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )


@both_profiles
def test_sekai_list_still_lists_healthy_plugins_and_notes_the_failure_on_stderr():
    proc = sekai_cli("list")
    assert proc.returncode == 0, proc.stderr
    assert "example/Gridworld-v0" in proc.stdout
    assert proc.stderr.strip() == (
        "warning: 1 plugin failed to load (broken: sekai-broken-pack 0.1.0); "
        "see sekai list --plugins"
    )


@both_profiles
def test_sekai_list_plugins_shows_the_broken_row():
    proc = sekai_cli("list", "--plugins")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:] if line.strip()}
    assert "sekai-broken-pack" in rows["broken"]
    assert rows["broken"].endswith(
        "failed (import): ModuleNotFoundError: No module named 'not_a_real_dependency'"
    )
    assert "ok" in rows["example"]


@both_profiles
def test_sekai_list_strict_exits_one_because_a_plugin_failed():
    assert sekai_cli("list", "--strict").returncode == 1
