"""The examples of docs/pages/accelerators.md run here, where JAX and torch are installed.

The docs session has neither, so those blocks carry ``<!-- docs-test: skip: needs JAX and
torch ... -->`` (as scaling-out.md's Ray blocks do); this test runs them in order as one script
and checks that each ``print(...)  # text`` prints ``text`` (whitespace-normalised). It needs
torch too, so it runs in the ``accel`` nox session and skips in ``tests(sekai-jax)``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

import sekai

pytest.importorskip("torch")

PAGE = Path(__file__).resolve().parents[3] / "docs" / "pages" / "accelerators.md"
MARKER = re.compile(r"^<!--\s*docs-test:\s*skip:\s*needs JAX and torch")
PRINT_COMMENT = re.compile(r"^\s*print\(.*\)\s+#\s?(?P<expected>.*)$")


def _blocks(markdown: str) -> list[tuple[int, str]]:
    """(first line, code) of every ```python block marked as needing JAX and torch."""
    lines = markdown.splitlines()
    blocks = []
    for index, line in enumerate(lines):
        if MARKER.match(line) and lines[index + 1].strip() == "```python":
            end = lines.index("```", index + 2)
            blocks.append((index + 3, "\n".join(lines[index + 2 : end])))
    return blocks


def test_accelerators_examples_print_what_the_page_says() -> None:
    blocks = _blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    script: list[str] = []
    origin: dict[int, int] = {}
    for first, code in blocks:
        for offset, line in enumerate(code.splitlines()):
            script.append(line)
            origin[len(script)] = first + offset
    printed: list[tuple[int, str]] = []

    def record(*args: Any, **kwargs: Any) -> None:
        printed.append((sys._getframe(1).f_lineno, " ".join(str(a) for a in args)))

    namespace: dict[str, Any] = {"__name__": "__main__", "print": record}
    try:
        exec(compile("\n".join(script), str(PAGE), "exec"), namespace)
    finally:
        if any(spec.id == "demo/Walk-v0" for spec in sekai.all_specs()):
            sekai.deregister("demo/Walk-v0")
    expected = {
        number: found["expected"]
        for number, line in enumerate(script, 1)
        if (found := PRINT_COMMENT.match(line))
    }
    assert sorted(line for line, _ in printed) == sorted(expected), "a commented print did not run"
    for line, text in printed:
        where = f"accelerators.md:{origin[line]}"
        assert " ".join(text.split()) == " ".join(expected[line].split()), where
