from importlib import metadata

import sekai


def test_import_exposes_version():
    # The installed distribution's version, not a literal that a release bump would have to find.
    assert sekai.__version__ == metadata.version("sekai-core")
