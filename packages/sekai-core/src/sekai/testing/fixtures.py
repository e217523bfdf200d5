"""pytest fixtures shared by every sekai test suite (loaded with ``-p sekai.testing.fixtures``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from sekai.testing import registry_sandbox

if TYPE_CHECKING:
    from sekai.registry.registry import EnvRegistry

__all__ = ["sekai_line_registry", "sekai_registry"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--slow``: also run the tests marked slow (training runs)."""
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (examples and tests that train models)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect slow tests unless ``--slow`` is given (deselected, never skipped).

    With ``--slow`` they run first: parallel workers (pytest-xdist) then start the long runs
    together instead of finishing on them one after another.
    """
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if config.getoption("--slow"):
        items[:] = slow + [item for item in items if item.get_closest_marker("slow") is None]
        return
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


@pytest.fixture
def sekai_registry() -> Iterator[EnvRegistry]:
    """A fresh default registry for one test: core's vector backends, no env, no entry point."""
    with registry_sandbox() as registry:
        yield registry


@pytest.fixture
def sekai_line_registry() -> Iterator[EnvRegistry]:
    """A fresh default registry holding ``testing/Line-v0`` (``sekai.testing.envs``)."""
    from sekai.testing.envs import LinePlugin

    with registry_sandbox(("testing", LinePlugin)) as registry:
        yield registry
