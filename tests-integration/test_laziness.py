"""`import sekai` loads no plugin, and loading every plugin imports no env module."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

# Top-level packages `import sekai` must not import: plugins, the metadata scan, heavy extras.
FORBIDDEN_AT_IMPORT = {
    "pluggy",
    "importlib_metadata",
    "gymnasium",
    "pettingzoo",
    "cloudpickle",
    "sekai_example_pack",
    "sekai_broken_pack",
}
# sekai modules `import sekai` must not import: discovery, the registry, env packages.
FORBIDDEN_SEKAI_PREFIXES = ("sekai.plugins", "sekai.registry", "sekai.envs", "sekai.finance")


def both_profiles(test):
    """Mark ``test`` for the full and the minimal profile."""
    return pytest.mark.full(pytest.mark.minimal(test))


def python(*args):
    environ = {k: v for k, v in os.environ.items() if k != "SEKAI_DISABLE_PLUGINS"}
    proc = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def imported_by_importtime(stderr):
    """Module names from ``python -X importtime`` output (``import time: self | cum | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def is_forbidden(name):
    return name.split(".")[0] in FORBIDDEN_AT_IMPORT or name.startswith(
        ("importlib.metadata", *FORBIDDEN_SEKAI_PREFIXES)
    )


@both_profiles
def test_import_sekai_imports_no_plugin_no_entry_point_scan_and_no_heavy_extra():
    names = imported_by_importtime(python("-X", "importtime", "-c", "import sekai").stderr)
    assert "sekai" in names
    assert sorted(n for n in names if is_forbidden(n)) == []


@both_profiles
def test_lazy_top_level_names_do_not_trigger_discovery():
    code = (
        "import json, sys, sekai; sekai.Box; sekai.TimeLimit; print(json.dumps(list(sys.modules)))"
    )
    names = json.loads(python("-c", code).stdout)
    assert "pluggy" not in names and "sekai.plugins" not in names


LOAD_ALL = """
import json, sys, warnings
warnings.simplefilter("ignore")
import sekai
specs = sekai.all_specs()
entry_modules = sorted({
    ep.partition(":")[0]
    for s in specs
    for ep in (s.entry_point, s.vector_entry_point)
    if isinstance(ep, str)
})
loaded = [m for m in entry_modules if m in sys.modules]
{after}
print(json.dumps([entry_modules, loaded, sorted(sys.modules)]))
"""


@both_profiles
def test_loading_every_plugin_imports_no_env_module():
    entry_modules, loaded, modules = json.loads(
        python("-c", textwrap.dedent(LOAD_ALL.replace("{after}", ""))).stdout
    )
    assert "sekai_example_pack.gridworld" in entry_modules
    assert loaded == []
    assert not {"gymnasium", "pettingzoo"} & {m.split(".")[0] for m in modules}


@both_profiles
def test_make_imports_only_the_env_module_it_needs():
    after = (
        'sekai.make("example/Gridworld-v0")\n'
        "loaded = [m for m in entry_modules if m in sys.modules]"
    )
    _, loaded, _ = json.loads(
        python("-c", textwrap.dedent(LOAD_ALL.replace("{after}", after))).stdout
    )
    assert loaded == ["sekai_example_pack.gridworld"]
