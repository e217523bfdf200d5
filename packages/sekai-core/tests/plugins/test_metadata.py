import sys

import sekai
from sekai import _metadata


def test_metadata_uses_the_backport_below_python_3_12():
    expected = "importlib.metadata" if sys.version_info >= (3, 12) else "importlib_metadata"
    assert _metadata.entry_points.__module__.startswith(expected)


def test_installed_version_of_an_installed_and_a_missing_distribution():
    assert _metadata.installed_version("sekai-core") == sekai.__version__
    assert _metadata.installed_version("sekai-definitely-not-installed") is None


def test_entry_points_select_the_sekai_group():
    names = {ep.name for ep in _metadata.entry_points(group="sekai")}
    assert "classic" in names
