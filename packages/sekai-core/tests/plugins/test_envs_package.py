import re
import sys

import pytest

import sekai.envs
from sekai._providers import install_command


@pytest.fixture
def fake_env_package(tmp_path, monkeypatch):
    """Adds a fake sekai.envs.zz_fake subpackage (and a broken aa_broken one) to sekai.envs."""
    root = tmp_path / "sekai" / "envs"
    (root / "zz_fake").mkdir(parents=True)
    (root / "zz_fake" / "__init__.py").write_text(
        "__all__ = ['FakeThing']\nclass FakeThing:\n    pass\nclass Hidden:\n    pass\n"
    )
    (root / "aa_broken").mkdir()
    (root / "aa_broken" / "__init__.py").write_text("import not_a_real_dependency\n")
    monkeypatch.setattr(sekai.envs, "__path__", [*sekai.envs.__path__, str(root)])
    yield
    for name in ["sekai.envs.zz_fake", "sekai.envs.aa_broken"]:
        sys.modules.pop(name, None)
    for name in ["FakeThing"]:
        sekai.envs.__dict__.pop(name, None)


def test_names_in_an_installed_subpackage_all_resolve_and_are_cached(fake_env_package):
    thing = sekai.envs.FakeThing
    assert thing.__module__ == "sekai.envs.zz_fake"
    assert sekai.envs.__dict__["FakeThing"] is thing


def test_names_outside_all_are_not_exported(fake_env_package):
    with pytest.raises(AttributeError, match="has no attribute 'Hidden'"):
        _ = sekai.envs.Hidden


def test_a_broken_subpackage_does_not_hide_other_names_but_is_reported(fake_env_package):
    assert sekai.envs.FakeThing is not None
    with pytest.raises(AttributeError, match=re.escape("sekai.envs.aa_broken failed to import")):
        _ = sekai.envs.Nope


def test_a_first_party_export_of_a_missing_distribution_names_pip_install(monkeypatch):
    monkeypatch.setattr(sekai.envs, "_subpackages", list)
    with pytest.raises(AttributeError) as info:
        _ = sekai.envs.LimitOrderBookMarket
    assert str(info.value) == (
        "module 'sekai.envs' has no attribute 'LimitOrderBookMarket': it is provided by "
        "sekai-finance, which is not installed. Install it with: "
        f"{install_command('sekai-finance')}"
    )
    assert not hasattr(sekai.envs, "LimitOrderBookMarket")


def test_dunder_lookups_fail_fast():
    with pytest.raises(AttributeError):
        _ = sekai.envs.__wrapped__
