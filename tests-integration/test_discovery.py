"""Plugin discovery against installed wheels: the example pack and the first-party plugins."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from sekai._providers import is_first_party


def both_profiles(test):
    """Mark ``test`` for the full and the minimal profile (profile-specific tests get one)."""
    return pytest.mark.full(pytest.mark.minimal(test))


CLASSIC = ["CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1", "Acrobot-v1"]


def run(code, **env):
    """Run ``code`` in a fresh interpreter of this venv; return its last stdout line as JSON."""
    environ = {k: v for k, v in os.environ.items() if k != "SEKAI_DISABLE_PLUGINS"}
    environ.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


PRELUDE = """
import json, warnings
warnings.simplefilter("ignore")  # the broken pack's PluginLoadWarning is tested elsewhere
import sekai
"""


@both_profiles
def test_make_finds_the_example_pack_env():
    out = run(
        PRELUDE
        + """
env = sekai.make("example/Gridworld-v0")
result = env.reset(seed=0)
print(json.dumps([str(env), result.observation.tolist(), env.spec.max_episode_steps]))
"""
    )
    assert out[0] == "<TimeLimit(<example/Gridworld-v0>)>"
    assert len(out[1]) == 2
    assert out[2] == 100


@both_profiles
def test_all_specs_attributes_the_example_env_to_its_distribution():
    out = run(
        PRELUDE
        + """
spec = {s.id: s for s in sekai.all_specs()}["example/Gridworld-v0"]
print(json.dumps([spec.source.plugin, spec.source.distribution, spec.source.version,
                  spec.entry_point, spec.vector_entry_point]))
"""
    )
    assert out == [
        "example",
        "sekai-example-pack",
        "0.1.0",
        "sekai_example_pack.gridworld:GridworldEnv",
        "sekai_example_pack.gridworld:GridworldVecEnv",
    ]


@both_profiles
def test_make_vec_builds_the_example_native_env_by_default_and_sync_on_request():
    out = run(
        PRELUDE
        + """
native = sekai.make_vec("example/Gridworld-v0", num_envs=8)
sync = sekai.make_vec("example/Gridworld-v0", num_envs=2, vectorization_mode="sync")
print(json.dumps([str(native), str(sync), native.spec.id, native.reset(seed=0).observations.shape]))
"""
    )
    assert out == [
        "GridworldVecEnv(num_envs=8)",
        "SyncVecEnv(num_envs=2)",
        "example/Gridworld-v0",
        [8, 2],
    ]


@both_profiles
def test_report_lists_core_first_then_first_party_then_packs_sorted_by_distribution():
    out = run(
        PRELUDE
        + """
report = sekai.plugins.report()
rows = [[p.name, p.distribution, list(p.envs), list(p.backends)] for p in report.plugins]
print(json.dumps(rows))
"""
    )
    assert out[0] == ["core", "sekai-core", [], ["sync", "async", "proc"]]
    assert ["example", "sekai-example-pack", ["example/Gridworld-v0"], []] in out
    distributions = [p[1] for p in out[1:]]
    first_party = [d for d in distributions if is_first_party(d)]
    assert distributions == sorted(first_party) + sorted(set(distributions) - set(first_party))


@both_profiles
def test_all_specs_order_follows_the_plugin_load_order():
    out = run(
        PRELUDE
        + """
report = sekai.plugins.report()
print(json.dumps([[s.id for s in sekai.all_specs()], [e for p in report.plugins for e in p.envs]]))
"""
    )
    assert out[0] == out[1]


@both_profiles
def test_a_runtime_register_of_a_plugin_id_names_the_plugin():
    out = run(
        PRELUDE
        + """
try:
    sekai.register("example/Gridworld-v0", "sekai_example_pack.gridworld:GridworldEnv")
except sekai.EnvAlreadyRegistered as exc:
    print(json.dumps([str(exc), getattr(exc, "__notes__", [])]))
"""
    )
    # The message is core.md's exact text; the plugin is named in a note under it.
    assert out == [
        "Environment 'example/Gridworld-v0' is already registered.",
        ["It is provided by plugin 'example' (sekai-example-pack 0.1.0)."],
    ]


@both_profiles
def test_python_m_sekai_runs_the_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "sekai", "--version"], capture_output=True, text=True, timeout=120
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, "sekai 0.3.0")


@pytest.mark.full
def test_first_party_plugins_register_exactly_the_ids_of_the_provider_table():
    out = run(
        PRELUDE
        + """
from sekai import _providers
report = sekai.plugins.report()
by_dist = {p.distribution: sorted(p.envs) for p in report.plugins}
table = {p.distribution: sorted(p.env_ids) for p in _providers.PROVIDERS if p.plugin}
print(json.dumps([by_dist, table, [f.name for f in report.failures], list(report.missing)]))
"""
    )
    by_dist, table, failed, missing = out
    assert failed == ["broken"]
    assert missing == ["sekai-ray", "sekai-jax", "sekai-torch"]
    for dist in ("sekai-core", "sekai-classic", "sekai-finance"):
        assert by_dist[dist] == table[dist], dist


@pytest.mark.full
def test_classic_ids_are_registered_twice_with_native_vectors_only_in_the_namespace():
    out = run(
        PRELUDE
        + """
specs = {s.id: s for s in sekai.all_specs()}
rows = {
    i: [s.vector_entry_point is not None, s.max_episode_steps, s.source.distribution]
    for i, s in specs.items()
    if s.source is not None and s.source.plugin == "classic"
}
print(json.dumps(rows))
"""
    )
    for env_id in CLASSIC:
        assert out[env_id][0] is False
        assert out[f"classic/{env_id}"][0] is True
        assert out[env_id][1:] == out[f"classic/{env_id}"][1:]
        assert out[env_id][2] == "sekai-classic"


@pytest.mark.full
def test_quickstart_make_prints_the_time_limit_around_cartpole():
    out = run(PRELUDE + 'print(json.dumps(str(sekai.make("CartPole-v1"))))')
    assert out == "<TimeLimit(<CartPole-v1>)>"


@pytest.mark.full
def test_joint_envs_package_resolves_a_finance_export():
    out = run(PRELUDE + "print(json.dumps(sekai.envs.LimitOrderBookMarket.__module__))")
    assert out.startswith("sekai.envs.finance")


@pytest.mark.minimal
def test_minimal_profile_reports_every_optional_first_party_distribution_missing():
    out = run(PRELUDE + "print(json.dumps(list(sekai.plugins.report().missing)))")
    assert out == [
        "sekai-classic",
        "sekai-finance",
        "sekai-compat",
        "sekai-ray",
        "sekai-jax",
        "sekai-torch",
    ]
