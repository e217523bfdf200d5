"""Absent first-party distributions: every failure names what to pip install."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest


def both_profiles(test):
    """Mark ``test`` for the full and the minimal profile."""
    return pytest.mark.full(pytest.mark.minimal(test))


def run_json(code):
    environ = {k: v for k, v in os.environ.items() if k != "SEKAI_DISABLE_PLUGINS"}
    # A fresh empty folder: the checkout is never below it, so hints name absolute paths (a
    # checkout below the working folder, e.g. a clone in /tmp, would be named ./relative).
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=environ,
            cwd=cwd,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


PRELUDE = """
import importlib, importlib.util, json, warnings
warnings.simplefilter("ignore")  # the broken pack's warning is tested elsewhere
import sekai
from sekai import _metadata

def installed(dist):
    return _metadata.installed_version(dist) is not None

def outcome(call):
    try:
        value = call()
    except Exception as exc:
        return [type(exc).__name__, str(exc), getattr(exc, "provider", None)]
    return ["ok", repr(value), None]
"""


def hint(module, dist, command):
    return (
        f"No module named {module!r}: it is part of the {dist} distribution, which is not "
        f"installed. Install it with: {command}"
    )


def not_found(env_id, dist, command):
    return (
        f"Environment {env_id!r} not found in registry. It is provided by {dist}, which is not "
        f"installed: {command}. Use sekai.all_specs() or `sekai list` to see registered "
        "environments."
    )


@pytest.mark.minimal
def test_minimal_profile_has_no_finance_classic_or_compat():
    out = run_json(
        PRELUDE + 'print(json.dumps([installed(d) for d in ["sekai-finance", "sekai-classic", '
        '"sekai-compat", "sekai-cli", "sekai-example-pack"]]))'
    )
    assert out == [False, False, False, True, True]


@pytest.mark.minimal
@pytest.mark.parametrize(
    ("env_id", "dist"),
    [
        ("Trading-v0", "sekai-finance"),
        ("LimitOrderBook-v0", "sekai-finance"),
        ("CartPole-v1", "sekai-classic"),
        ("classic/CartPole-v1", "sekai-classic"),
    ],
)
def test_make_of_a_first_party_id_names_its_distribution(env_id, dist, install_command):
    out = run_json(PRELUDE + f"print(json.dumps(outcome(lambda: sekai.make({env_id!r}))))")
    assert out == ["EnvNotFound", not_found(env_id, dist, install_command(dist)), dist]


@pytest.mark.minimal
def test_everything_else_works_without_finance():
    out = run_json(
        PRELUDE
        + """
env = sekai.make("example/Gridworld-v0")
env.reset(seed=0)
vec = sekai.make_vec("example/Gridworld-v0", 2, vectorization_mode="sync")
vec.reset(seed=0)
print(json.dumps([str(env), str(vec), [s.id for s in sekai.all_specs()], str(sekai.Box(0, 1))]))
"""
    )
    assert out[:3] == [
        "<TimeLimit(<example/Gridworld-v0>)>",
        "SyncVecEnv(num_envs=2)",
        ["example/Gridworld-v0"],
    ]


@pytest.mark.minimal
@pytest.mark.parametrize(
    ("module", "dist"),
    [
        ("sekai.finance", "sekai-finance"),
        ("sekai.envs.finance", "sekai-finance"),
        ("sekai.envs.classic_control", "sekai-classic"),
        ("sekai.compat", "sekai-compat"),
    ],
)
def test_importing_a_missing_first_party_package_gives_the_install_hint(
    module, dist, install_command
):
    out = run_json(
        PRELUDE
        + f"""
print(json.dumps([outcome(lambda: importlib.import_module({module!r})),
                  outcome(lambda: importlib.util.find_spec({module!r}))]))
"""
    )
    assert out == [["ModuleNotFoundError", hint(module, dist, install_command(dist)), None]] * 2


@pytest.mark.minimal
def test_from_import_of_missing_finance_names_sekai_finance(install_command):
    out = run_json(
        PRELUDE
        + """
try:
    from sekai.finance import SequentialStart
except ModuleNotFoundError as exc:
    print(json.dumps([exc.name, str(exc)]))
"""
    )
    finance = install_command("sekai-finance")
    assert out == ["sekai.finance", hint("sekai.finance", "sekai-finance", finance)]


@pytest.mark.minimal
def test_missing_subpackage_attributes_raise_attribute_error_with_the_hint(install_command):
    out = run_json(
        PRELUDE
        + """
print(json.dumps([outcome(lambda: sekai.finance), hasattr(sekai, "finance"),
                  outcome(lambda: sekai.envs.LimitOrderBookMarket),
                  hasattr(sekai.envs, "LimitOrderBookMarket")]))
"""
    )
    finance = install_command("sekai-finance")
    assert out[0] == ["AttributeError", hint("sekai.finance", "sekai-finance", finance), None]
    assert out[1] is False
    assert out[2][0] == "AttributeError"
    assert out[2][1].endswith(
        f"it is provided by sekai-finance, which is not installed. Install it with: {finance}"
    )
    assert out[3] is False


@both_profiles
def test_ray_mode_and_module_name_sekai_ray(install_command):
    out = run_json(
        PRELUDE
        + """
vec = outcome(lambda: sekai.make_vec("example/Gridworld-v0", 2, vectorization_mode="ray"))
print(json.dumps([vec, outcome(lambda: importlib.import_module("sekai.ray"))]))
"""
    )
    ray = install_command("sekai-ray")
    assert out == [
        [
            "ValueError",
            "Unknown vectorization_mode 'ray'; expected one of ['native', 'sync', 'async', "
            f"'proc']. It is provided by sekai-ray, which is not installed: {ray}.",
            None,
        ],
        ["ModuleNotFoundError", hint("sekai.ray", "sekai-ray", ray), None],
    ]


@pytest.mark.full
def test_full_profile_imports_every_first_party_package():
    out = run_json(
        PRELUDE
        + """
names = ["sekai.finance", "sekai.envs.finance", "sekai.envs.classic_control", "sekai.compat",
         "sekai.cli"]
print(json.dumps([outcome(lambda: importlib.import_module(n))[0] for n in names]))
"""
    )
    assert out == ["ok"] * 5
