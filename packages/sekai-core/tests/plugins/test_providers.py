import importlib
import importlib.machinery
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sekai import _providers
from sekai._providers import (
    PROVIDERS,
    RESERVED_PLUGIN_NAMES,
    MissingDistributionFinder,
    install_command,
    install_missing_distribution_finder,
    is_first_party,
    normalize_distribution,
    provider_of_env,
    provider_of_export,
    provider_of_mode,
    provider_of_module,
)

CLASSIC = ["CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1", "Acrobot-v1"]
FINANCE = [
    "Trading-v0",
    "Portfolio-v0",
    "MarketMaking-v0",
    "OptimalExecution-v0",
    "Market-v0",
    "LimitOrderBook-v0",
]


def test_table_lists_every_first_party_distribution():
    assert [p.distribution for p in PROVIDERS] == [
        "sekai-core",
        "sekai-classic",
        "sekai-finance",
        "sekai-compat",
        "sekai-cli",
        "sekai-ray",
        "sekai-jax",
        "sekai-torch",
    ]
    assert {"core", "classic", "finance", "ray", "jax", "torch"} == RESERVED_PLUGIN_NAMES


@pytest.mark.parametrize("env_id", [*CLASSIC, *(f"classic/{i}" for i in CLASSIC)])
def test_classic_ids_and_their_twins_belong_to_sekai_classic(env_id):
    assert provider_of_env(env_id).distribution == "sekai-classic"


@pytest.mark.parametrize("env_id", FINANCE)
def test_finance_ids_belong_to_sekai_finance(env_id):
    assert provider_of_env(env_id).distribution == "sekai-finance"


def test_unknown_ids_modes_and_names_have_no_provider():
    assert provider_of_env("example/Gridworld-v0") is None
    assert provider_of_mode("fast") is None
    assert provider_of_export("Nope") is None


def test_modes_modules_and_exports_map_to_their_distribution():
    assert provider_of_mode("ray").distribution == "sekai-ray"
    assert provider_of_mode("jax").distribution == "sekai-jax"
    assert provider_of_mode("torch").distribution == "sekai-torch"
    assert provider_of_mode("proc").distribution == "sekai-core"
    assert provider_of_export("LimitOrderBookMarket").distribution == "sekai-finance"
    assert provider_of_export("CartPoleEnv").distribution == "sekai-classic"
    for module, dist in [
        ("sekai.finance", "sekai-finance"),
        ("sekai.envs.finance", "sekai-finance"),
        ("sekai.envs.classic_control", "sekai-classic"),
        ("sekai.compat", "sekai-compat"),
        ("sekai.cli", "sekai-cli"),
        ("sekai.ray", "sekai-ray"),
        ("sekai.jax", "sekai-jax"),
        ("sekai.torch", "sekai-torch"),
    ]:
        assert provider_of_module(module).distribution == dist
    assert provider_of_module("sekai") is None
    assert provider_of_module("sekai.finance.data") is None


def test_distribution_names_compare_normalised():
    assert normalize_distribution("Sekai_Finance") == "sekai-finance"
    assert is_first_party("sekai.classic") and not is_first_party("sekai-example-pack")


def test_finder_raises_the_install_hint_and_never_returns_a_spec():
    with pytest.raises(ModuleNotFoundError) as info:
        MissingDistributionFinder.find_spec("sekai.finance")
    assert str(info.value) == (
        "No module named 'sekai.finance': it is part of the sekai-finance distribution, which is "
        f"not installed. Install it with: {install_command('sekai-finance')}"
    )
    assert info.value.name == "sekai.finance"


def test_finder_ignores_modules_it_does_not_provide():
    assert MissingDistributionFinder.find_spec("sekai.finance.nope") is None
    assert MissingDistributionFinder.find_spec("numpy") is None


def test_finder_is_installed_once_at_the_end_of_meta_path():
    install_missing_distribution_finder()
    install_missing_distribution_finder()
    finders = [f for f in sys.meta_path if type(f).__name__ == "MissingDistributionFinder"]
    assert len(finders) == 1
    # importlib_metadata later appends a finder of its own, which never finds modules.
    path_finder = sys.meta_path.index(importlib.machinery.PathFinder)
    assert sys.meta_path.index(finders[0]) > path_finder


def test_import_sekai_appends_the_finder_at_the_very_end():
    code = "import sys, sekai; print(type(sys.meta_path[-1]).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "MissingDistributionFinder"


def test_find_spec_of_an_absent_first_party_package_raises_the_hint(monkeypatch):
    # sekai-ray made absent whether or not it is installed (its sources on PYTHONPATH): the
    # sekai package's path loses the folders that hold it, so every other finder fails first.
    import sekai

    kept = [path for path in sekai.__path__ if not Path(path, "ray").exists()]
    monkeypatch.setattr(sekai, "__path__", kept)
    for name in [
        name for name in sys.modules if name == "sekai.ray" or name.startswith("sekai.ray.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(sekai, "ray", raising=False)
    with pytest.raises(ModuleNotFoundError, match=re.escape(install_command("sekai-ray"))):
        importlib.util.find_spec("sekai.ray")
    with pytest.raises(ModuleNotFoundError, match="part of the sekai-ray distribution"):
        importlib.import_module("sekai.ray")


def test_the_finder_leaves_installed_modules_alone():
    assert importlib.util.find_spec("sekai.registry") is not None


def test_finder_source_stays_short():
    import inspect

    assert len(inspect.getsource(_providers.MissingDistributionFinder).splitlines()) < 30


TOP_LEVEL = sorted(
    module.removeprefix("sekai.")
    for p in PROVIDERS[1:]
    for module in p.modules
    if module.count(".") == 1
)


def _forget_subpackage(monkeypatch, sekai, name):
    """Unimport ``sekai.<name>`` for one test; the test's end restores what was there."""
    for namespace, key in ((sys.modules, f"sekai.{name}"), (vars(sekai), name)):
        monkeypatch.setitem(namespace, key, None)  # recorded (absent or not), then removed
        monkeypatch.delitem(namespace, key)


def test_every_first_party_subpackage_is_an_attribute_of_sekai():
    assert TOP_LEVEL == ["cli", "compat", "finance", "jax", "ray", "torch"]


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_an_absent_first_party_subpackage_attribute_names_its_distribution(
    name, tmp_path, monkeypatch
):
    import sekai

    monkeypatch.setattr(sekai, "__path__", [str(tmp_path)])  # no distribution contributes to it
    _forget_subpackage(monkeypatch, sekai, name)
    dist = provider_of_module(f"sekai.{name}").distribution
    with pytest.raises(AttributeError) as info:
        getattr(sekai, name)
    assert str(info.value) == (
        f"No module named 'sekai.{name}': it is part of the {dist} distribution, which is not "
        f"installed. Install it with: {install_command(dist)}"
    )
    assert not hasattr(sekai, name)


@pytest.mark.parametrize("name", ["ray", "jax", "torch"])
def test_an_installed_first_party_subpackage_is_imported_on_first_use(name, tmp_path, monkeypatch):
    import sekai

    portion = tmp_path / "sekai"
    (portion / name).mkdir(parents=True)
    (portion / name / "__init__.py").write_text("MARK = 'imported'\n")
    monkeypatch.setattr(sekai, "__path__", [str(portion)])  # the only one contributing to it
    _forget_subpackage(monkeypatch, sekai, name)
    assert getattr(sekai, name).MARK == "imported"
    assert sys.modules[f"sekai.{name}"] is getattr(sekai, name)
    assert name in dir(sekai)
