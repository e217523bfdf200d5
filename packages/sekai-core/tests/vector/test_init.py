"""sekai.vector exports, including the lazily imported ProcVecEnv."""

from __future__ import annotations

import sys
import types

import pytest

import sekai
import sekai.vector


def test_every_export_resolves_and_matches_the_top_level_name() -> None:
    # "All exported from sekai and sekai.vector", shared and Spawnable included.
    for name in sekai.vector.__all__:
        assert getattr(sekai, name) is getattr(sekai.vector, name), name
        assert name in sekai.__all__ and name in dir(sekai), name


def test_proc_vec_env_is_imported_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("sekai.vector.proc.vec_env")

    class ProcVecEnv:
        pass

    fake.ProcVecEnv = ProcVecEnv  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sekai.vector.proc.vec_env", fake)
    monkeypatch.delitem(vars(sekai.vector), "ProcVecEnv", raising=False)
    assert sekai.vector.ProcVecEnv is ProcVecEnv
    assert vars(sekai.vector)["ProcVecEnv"] is ProcVecEnv  # cached
    monkeypatch.delitem(vars(sekai.vector), "ProcVecEnv")


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        sekai.vector.Nope  # noqa: B018
