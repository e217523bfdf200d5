"""Run the docs examples that the docs session skips because they need an optional library."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sekai.registry.api import all_specs, deregister

__all__ = ["assert_marked_examples_print"]

_PRINT_COMMENT = re.compile(r"^\s*print\(.*\)\s+#\s?(?P<expected>.*)$")


def _blocks(markdown: str, marker: re.Pattern[str]) -> list[tuple[int, str]]:
    """(first line, code) of every ```python block right below a line matching ``marker``."""
    lines = markdown.splitlines()
    blocks = []
    for index, line in enumerate(lines):
        if marker.match(line) and lines[index + 1].strip() == "```python":
            end = lines.index("```", index + 2)
            blocks.append((index + 3, "\n".join(lines[index + 2 : end])))
    return blocks


def _reader_warning_filters() -> None:
    """The warnings a reader running the page sees: Python's default filters, under which a
    library's DeprecationWarning is hidden and the page's own (``__main__``) is shown."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


def assert_marked_examples_print(
    page: Path, marker: str, *, min_blocks: int, registered: Iterable[str] = ()
) -> None:
    """Run a page's ```python blocks marked by ``marker`` in order, as one script, and assert
    that each ``print(...)  # text`` prints ``text`` (whitespace-normalised) and that nothing
    else is printed, warned or written to stderr.

    Args:
        page: the Markdown page.
        marker: a regular expression matching the HTML comment above each block to run
            (``<!-- docs-test: skip: needs Ray ...``), which the docs session skips.
        min_blocks: how many such blocks the page must have at least.
        registered: env IDs the examples register, deregistered afterwards.
    """
    blocks = _blocks(page.read_text(encoding="utf-8"), re.compile(marker))
    assert len(blocks) >= min_blocks, f"{page.name}: {len(blocks)} marked blocks"
    script: list[str] = []
    origin: dict[int, int] = {}
    for first, code in blocks:
        for offset, line in enumerate(code.splitlines()):
            script.append(line)
            origin[len(script)] = first + offset
    printed: list[tuple[int, str]] = []

    def record(*args: Any, **kwargs: Any) -> None:
        if kwargs.get("file") not in (None, sys.stdout):
            print(*args, **kwargs)  # e.g. file=sys.stderr: caught as stray output below
            return
        text = io.StringIO()
        print(*args, **{**kwargs, "file": text})  # the real print's sep= and end=
        printed.append((sys._getframe(1).f_lineno, text.getvalue()))

    namespace: dict[str, Any] = {"__name__": "__main__", "print": record}
    stray, stray_out = io.StringIO(), io.StringIO()
    try:
        with (
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stderr(stray),
            contextlib.redirect_stdout(stray_out),  # a library's prints: the page's go to record
        ):
            _reader_warning_filters()
            exec(compile("\n".join(script), str(page), "exec"), namespace)
    finally:
        ids = {spec.id for spec in all_specs()}
        for env_id in registered:
            if env_id in ids:
                deregister(env_id)
    # a reader running the page would see these too: the page must not produce them
    assert not caught, f"{page.name}: warnings: {[str(w.message) for w in caught]}"
    assert not stray.getvalue(), f"{page.name}: output on stderr: {stray.getvalue()!r}"
    assert not stray_out.getvalue(), f"{page.name}: stray output: {stray_out.getvalue()!r}"
    expected = {
        number: found["expected"]
        for number, code in enumerate(script, 1)
        if (found := _PRINT_COMMENT.match(code))
    }
    ran = sorted(number for number, _ in printed)
    assert ran == sorted(expected), "a commented print did not run"
    for number, text in printed:
        where = f"{page.name}:{origin[number]}"
        assert " ".join(text.split()) == " ".join(expected[number].split()), where
