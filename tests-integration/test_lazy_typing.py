"""Every lazily exported name is visible to type checkers, and no module ``__getattr__`` is.

A module-level ``__getattr__`` that mypy can see makes every unknown attribute of the package
``Any``: ``sekai.mkae(...)`` or ``from sekai import Discrette`` would pass ``mypy --strict``. So
the lazy packages define it under ``if not TYPE_CHECKING:`` and import each exported name (and
each submodule reachable as an attribute) under ``if TYPE_CHECKING:``; the joint env package
star-imports the first-party env packages there.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import sekai
from sekai._providers import PROVIDERS

# Both profiles: each checks the packages of the distributions it installs.
pytestmark = [pytest.mark.full, pytest.mark.minimal]

# The joint env package looks names up in whatever env packages are installed (a third-party
# pack's too), so it has no __all__ of its own: checked by the last test.
OPEN_ENDED = {"sekai.envs"}


def _lazy_packages() -> dict[str, Path]:
    """Dotted name -> ``__init__.py`` of every installed sekai package defining ``__getattr__``."""
    found: dict[str, Path] = {}
    for root in map(Path, sekai.__path__):
        for init in sorted(root.rglob("__init__.py")):
            parts = init.parent.relative_to(root.parent).parts
            name = ".".join(parts)
            if name not in found and "__getattr__" in init.read_text(encoding="utf-8"):
                found[name] = init
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _bound(statements: list[ast.stmt]) -> set[str]:
    """Names a type checker sees bound by ``statements`` (skipping ``if not TYPE_CHECKING``)."""
    names: set[str] = set()
    for node in statements:
        if isinstance(node, ast.If):
            if isinstance(node.test, ast.UnaryOp) and _is_type_checking(node.test.operand):
                names |= _bound(node.orelse)
            else:
                names |= _bound(node.body) | _bound(node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


PACKAGES = _lazy_packages()


def test_the_lazy_packages_are_found() -> None:
    assert {"sekai", "sekai.vector", "sekai.utils", "sekai.rendering"} <= set(PACKAGES)


@pytest.mark.parametrize("name", sorted(set(PACKAGES) - OPEN_ENDED))
def test_exports_are_typed_and_module_getattr_is_hidden_from_type_checkers(name: str) -> None:
    module = importlib.import_module(name)
    seen = _bound(ast.parse(PACKAGES[name].read_text(encoding="utf-8")).body)
    assert "__getattr__" not in seen, f"{name}: define __getattr__ under 'if not TYPE_CHECKING:'"
    submodules = getattr(module, "_SUBMODULES", ())
    exported = {*module.__all__, *getattr(module, "_LAZY", ()), *submodules}
    assert sorted(exported - seen) == [], f"{name}: import these under 'if TYPE_CHECKING:'"


def _star_imports(statements: list[ast.stmt], *, type_checking: bool = False) -> set[str]:
    """The modules ``statements`` star-import under ``if TYPE_CHECKING:``."""
    found: set[str] = set()
    for node in statements:
        if isinstance(node, ast.If):
            inside = _is_type_checking(node.test)
            found |= _star_imports(node.body, type_checking=type_checking or inside)
        elif isinstance(node, ast.ImportFrom) and type_checking and node.module:
            found |= {node.module} if [a.name for a in node.names] == ["*"] else set()
    return found


def test_the_joint_env_package_shows_type_checkers_every_first_party_env_package() -> None:
    body = ast.parse(PACKAGES["sekai.envs"].read_text(encoding="utf-8")).body
    assert "__getattr__" not in _bound(body), "sekai.envs: hide __getattr__ from type checkers"
    first_party = {
        module for p in PROVIDERS for module in p.modules if module.startswith("sekai.envs.")
    }
    assert _star_imports(body) == first_party
