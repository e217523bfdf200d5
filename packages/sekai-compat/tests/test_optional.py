"""Without gymnasium / pettingzoo / SB3: MissingDependency naming the fix; import still works."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

import sekai
import sekai.compat
from sekai.compat import _optional

GYMNASIUM_HINT = "pip install 'sekai-compat[gymnasium]'"
PETTINGZOO_HINT = "pip install 'sekai-compat[pettingzoo]'"


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import <module>`` fail as if it were not installed."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


GYMNASIUM_FUNCTIONS: list[tuple[str, Callable[[], Any]]] = [
    ("to_gymnasium()", lambda: sekai.compat.to_gymnasium(sekai.make("CartPole-v1"))),
    ("from_gymnasium()", lambda: sekai.compat.from_gymnasium(object())),  # type: ignore[arg-type]
    ("GymnasiumRenderer()", lambda: sekai.compat.GymnasiumRenderer()),
    ("space_to_gymnasium()", lambda: sekai.compat.space_to_gymnasium(sekai.Discrete(2))),
    ("space_from_gymnasium()", lambda: sekai.compat.space_from_gymnasium(object())),  # type: ignore[arg-type]
    ("to_gymnasium_vector()", lambda: sekai.compat.to_gymnasium_vector(object())),  # type: ignore[arg-type]
    ("from_gymnasium_vector()", lambda: sekai.compat.from_gymnasium_vector(object())),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("name", "call"), GYMNASIUM_FUNCTIONS, ids=[n for n, _ in GYMNASIUM_FUNCTIONS]
)
def test_gymnasium_functions_raise_missing_dependency_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, name: str, call: Callable[[], Any]
) -> None:
    hide(monkeypatch, "gymnasium")
    with pytest.raises(sekai.MissingDependency) as info:
        call()
    minimum = "1.1" if "vector" in name else "1.0"
    assert str(info.value) == (
        f"{name} needs gymnasium>={minimum}, which is not installed: {GYMNASIUM_HINT}"
    )
    assert info.value.package == "gymnasium" and info.value.extra == "gymnasium"
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value.__cause__, ImportError)


def test_to_gymnasium_message_is_the_spec_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    hide(monkeypatch, "gymnasium")
    with pytest.raises(sekai.MissingDependency) as info:
        sekai.compat.to_gymnasium(sekai.make("CartPole-v1"))
    assert str(info.value) == (
        "to_gymnasium() needs gymnasium>=1.0, which is not installed: "
        "pip install 'sekai-compat[gymnasium]'"
    )


@pytest.mark.parametrize("missing", ["pettingzoo", "gymnasium"])
@pytest.mark.parametrize("name", ["to_pettingzoo", "from_pettingzoo"])
def test_pettingzoo_functions_raise_missing_dependency_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, name: str, missing: str
) -> None:
    hide(monkeypatch, missing)
    with pytest.raises(sekai.MissingDependency, match=r"\[pettingzoo\]") as info:
        getattr(sekai.compat, name)(object())
    assert str(info.value).startswith(f"{name}() needs {missing}>=")
    assert info.value.package == missing and info.value.extra == "pettingzoo"


def test_to_sb3_raises_missing_dependency_naming_pip_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hide(monkeypatch, "stable_baselines3")
    with pytest.raises(sekai.MissingDependency) as info:
        sekai.compat.to_sb3(object())  # type: ignore[arg-type]
    assert str(info.value) == (
        "to_sb3() needs stable-baselines3>=2.0, which is not installed: "
        "pip install stable-baselines3"
    )
    assert info.value.package == "stable-baselines3" and info.value.extra is None


@pytest.mark.parametrize(
    ("name", "missing", "hint"),
    [
        ("SekaiToGymnasium", "gymnasium", GYMNASIUM_HINT),
        ("SekaiToGymnasiumVector", "gymnasium", GYMNASIUM_HINT),
        ("SekaiToPettingZoo", "pettingzoo", PETTINGZOO_HINT),
        ("SekaiToSB3", "stable_baselines3", "pip install stable-baselines3"),
    ],
)
def test_bridge_classes_raise_missing_dependency_on_access(
    monkeypatch: pytest.MonkeyPatch, name: str, missing: str, hint: str
) -> None:
    monkeypatch.delitem(vars(sekai.compat), name, raising=False)  # drop the cached class
    hide(monkeypatch, missing)
    pattern = f"sekai.compat.{name} needs .*{re.escape(hint)}"
    with pytest.raises(sekai.MissingDependency, match=pattern):
        getattr(sekai.compat, name)


def test_too_old_gymnasium_is_named_with_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import gymnasium

    monkeypatch.setattr(gymnasium, "__version__", "1.0.0")
    with pytest.raises(sekai.MissingDependency) as info:
        sekai.compat.to_gymnasium_vector(object())  # type: ignore[arg-type]
    # a gymnasium installed before the extra, or pinned, may be older than the extra's floor
    assert str(info.value) == (
        "to_gymnasium_vector() needs gymnasium>=1.1, found gymnasium 1.0.0: "
        "pip install -U 'gymnasium>=1.1'"
    )
    assert sekai.compat.to_gymnasium(sekai.make("CartPole-v1")) is not None  # 1.0 is enough


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.1.0", (1, 1, 0)), ("1.2.3rc1", (1, 2, 3)), ("2.0.0.dev4", (2, 0, 0)), ("x", ())],
)
def test_version_tuple_reads_the_release_segments(version: str, expected: tuple[int, ...]) -> None:
    assert _optional._version_tuple(version) == expected


def test_unknown_attribute_is_an_attribute_error() -> None:
    assert not hasattr(sekai.compat, "nope")
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        sekai.compat.nope  # noqa: B018


def test_dir_lists_every_public_name() -> None:
    names = {"SekaiToGymnasium", "SekaiToGymnasiumVector", "SekaiToPettingZoo", "SekaiToSB3"}
    assert set(sekai.compat.__all__) | names <= set(dir(sekai.compat))


def test_import_sekai_compat_works_without_any_optional_library() -> None:
    script = textwrap.dedent(
        """
        import sys

        BLOCKED = ("gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "torch")

        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Blocker())
        import sekai
        import sekai.compat
        from sekai.compat import *
        from sekai.compat import from_gymnasium, to_gymnasium, to_pettingzoo, to_sb3

        assert sekai.compat is sekai.compat
        for call in (
            lambda: to_gymnasium(sekai.make("CartPole-v1")),
            lambda: from_gymnasium(None),
            lambda: to_pettingzoo(None),
            lambda: to_sb3(None),
        ):
            try:
                call()
            except sekai.MissingDependency as exc:
                print(exc)
            else:
                raise AssertionError("no MissingDependency")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        print("loaded:", loaded)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"to_gymnasium() needs gymnasium>=1.0, which is not installed: {GYMNASIUM_HINT}",
        f"from_gymnasium() needs gymnasium>=1.0, which is not installed: {GYMNASIUM_HINT}",
        f"to_pettingzoo() needs gymnasium>=1.0, which is not installed: {PETTINGZOO_HINT}",
        "to_sb3() needs stable-baselines3>=2.0, which is not installed: "
        "pip install stable-baselines3",
        "loaded: []",
    ]
