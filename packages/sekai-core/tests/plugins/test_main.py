import importlib

import pytest

from sekai import __main__ as sekai_main


def test_python_m_sekai_prints_the_install_hint_without_the_cli(monkeypatch, capsys):
    real_import = importlib.import_module

    def fake_import(name, *args):
        if name == "sekai.cli":
            raise ModuleNotFoundError(
                "No module named 'sekai.cli': it is part of the sekai-cli distribution, which is "
                "not installed. Install it with: pip install sekai-cli",
                name="sekai.cli",
            )
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    assert sekai_main._run() == 2  # an ImportError: 1 would mean check found errors
    assert "pip install sekai-cli" in capsys.readouterr().err


def test_python_m_sekai_reraises_other_missing_modules(monkeypatch):
    def fake_import(name, *args):
        raise ModuleNotFoundError("No module named 'argcomplete'", name="argcomplete")

    monkeypatch.setattr(importlib, "import_module", fake_import)
    with pytest.raises(ModuleNotFoundError, match="argcomplete"):
        sekai_main._run()


def test_python_m_sekai_runs_the_cli_main(monkeypatch):
    class FakeCli:
        @staticmethod
        def main():
            return 7

    monkeypatch.setattr(importlib, "import_module", lambda name, *args: FakeCli)
    assert sekai_main._run() == 7
