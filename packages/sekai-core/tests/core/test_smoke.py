import sekai


def test_import_exposes_version():
    assert sekai.__version__ == "0.3.0"
