from __future__ import annotations

import json
import types
from typing import Any

import pytest

from sekai.utils._lazy import lazy_exports


def _package(names: dict[str, str], submodules: dict[str, str] | None = None) -> types.ModuleType:
    module = types.ModuleType("fake_pkg")
    module.__getattr__, module.__dir__ = lazy_exports(  # type: ignore[method-assign]
        vars(module), names, submodules=submodules
    )
    return module


def test_lazy_name_is_imported_on_first_access_and_then_stored() -> None:
    module = _package({"dumps": "json"})
    assert "dumps" not in vars(module)
    assert module.dumps is json.dumps
    assert vars(module)["dumps"] is json.dumps


def test_unknown_name_raises_attribute_error_naming_the_module() -> None:
    module = _package({"dumps": "json"})
    with pytest.raises(AttributeError, match="module 'fake_pkg' has no attribute 'loads'"):
        _ = module.loads
    assert not hasattr(module, "loads")


def test_submodule_is_returned_and_not_stored() -> None:
    module = _package({}, {"codec": "json"})
    assert module.codec is json
    assert "codec" not in vars(module)


def test_missing_submodule_is_an_attribute_error_so_hasattr_is_safe() -> None:
    module = _package({}, {"absent": "sekai_test_no_such_module"})
    assert not hasattr(module, "absent")
    with pytest.raises(AttributeError, match="sekai_test_no_such_module"):
        _ = module.absent


def test_dir_lists_loaded_lazy_and_submodule_names() -> None:
    module = _package({"dumps": "json"}, {"codec": "json"})
    listing = dir(module)
    assert listing == sorted(listing)
    assert {"dumps", "codec", "__name__"} <= set(listing)


def test_an_absent_module_is_an_attribute_error_and_a_library_missing_inside_it_propagates(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sekai_test_needs_lib.py").write_text("import sekai_test_no_such_lib\nx = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _package({"x": "sekai_test_needs_lib", "y": "sekai_test_no_such_module"})
    assert not hasattr(module, "y")  # its distribution is not installed
    with pytest.raises(ModuleNotFoundError, match="sekai_test_no_such_lib"):
        _ = module.x  # installed, but broken: say what is missing
    submodules = _package({}, {"needs": "sekai_test_needs_lib"})
    with pytest.raises(ModuleNotFoundError, match="sekai_test_no_such_lib"):
        _ = submodules.needs
