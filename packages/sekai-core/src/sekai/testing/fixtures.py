"""pytest fixtures shared by every sekai test suite (loaded with ``-p sekai.testing.fixtures``)."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from sekai.testing import registry_sandbox

if TYPE_CHECKING:
    from sekai.registry.registry import EnvRegistry

T = TypeVar("T")

__all__ = [
    "in_thread",
    "interrupted_once",
    "sekai_line_registry",
    "sekai_registry",
    "spread_first",
]


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

    With ``--slow`` they run first, spread over the pytest-xdist workers (``spread_first``), so
    the long runs start together instead of waiting one behind another on the same worker.
    """
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    fast = [item for item in items if item.get_closest_marker("slow") is None]
    if config.getoption("--slow"):
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        items[:] = spread_first(slow, fast, workers)
        return
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = fast


def spread_first(first: list[T], rest: list[T], workers: int) -> list[T]:
    """Order ``first + rest`` so that each worker's share starts with some of ``first``.

    pytest-xdist's ``worksteal`` hands worker ``i`` of ``w`` the contiguous share
    ``[i * n // w, (i + 1) * n // w)`` of the ``n`` tests, and another worker only ever takes
    tests from the end of a share. ``first[k]`` therefore goes to position ``k // w`` of share
    ``k % w``: the first ``w`` start at once, one per worker, with nothing queued before them.
    """
    n = len(first) + len(rest)
    if workers <= 1 or len(first) > n // workers:
        return first + rest
    order: list[T | None] = [None] * n
    for k, item in enumerate(first):
        order[(k % workers) * n // workers + k // workers] = item
    others = iter(rest)
    return [item if item is not None else next(others) for item in order]


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


def interrupted_once(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, except that its first call raises KeyboardInterrupt: a Ctrl-C landing there
    (monkeypatch a function or method with it)."""
    calls = 0

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyboardInterrupt
        return fn(*args, **kwargs)

    return wrapper


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Start ``fn`` in a daemon thread (a deadlock fails the test instead of hanging pytest):
    the thread, and a list that gets what ``fn`` returned or raised."""
    got: list[Any] = []

    def run() -> None:
        try:
            got.append(fn())
        except BaseException as exc:  # KeyboardInterrupt and the like are outcomes too
            got.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got
