"""The examples of docs/pages/accelerators.md run here, where JAX and torch are installed.

The docs session has neither, so those blocks carry ``<!-- docs-test: skip: needs JAX and
torch ... -->`` (as scaling-out.md's Ray blocks do). It needs torch too, so it runs in the
``accel`` nox session and skips in ``tests(sekai-jax)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sekai.testing.docs import assert_marked_examples_print

pytest.importorskip("torch")

PAGE = Path(__file__).resolve().parents[3] / "docs" / "pages" / "accelerators.md"


def test_accelerators_examples_print_what_the_page_says() -> None:
    assert_marked_examples_print(
        PAGE,
        r"^<!--\s*docs-test:\s*skip:\s*needs JAX and torch",
        min_blocks=5,
        registered=("demo/Walk-v0",),
    )
