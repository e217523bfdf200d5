import sys

import sekai
from sekai import _metadata


def test_metadata_uses_the_backport_below_python_3_12():
    expected = "importlib.metadata" if sys.version_info >= (3, 12) else "importlib_metadata"
    assert _metadata.entry_points.__module__.startswith(expected)


def test_installed_version_of_an_installed_and_a_missing_distribution():
    assert _metadata.installed_version("sekai-core") == sekai.__version__
    assert _metadata.installed_version("sekai-definitely-not-installed") is None


def test_entry_points_select_the_sekai_group(tmp_path, monkeypatch):
    info = tmp_path / "fake_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-pack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[sekai]\nfake = fake_pack._plugin\n[other]\nx = y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {ep.name: ep for ep in _metadata.entry_points(group="sekai")}
    assert found["fake"].value == "fake_pack._plugin"
    assert found["fake"].dist.name == "fake-pack"
    assert "x" not in found
