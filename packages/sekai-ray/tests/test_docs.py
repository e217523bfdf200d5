"""The examples of docs/pages/scaling-out.md that need Ray run here, against the test cluster.

The docs session has no Ray, so those blocks carry ``<!-- docs-test: skip: needs Ray
(sekai-ray) ... -->``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sekai.testing.docs import assert_marked_examples_print

pytestmark = pytest.mark.usefixtures("ray_cluster")

PAGE = Path(__file__).resolve().parents[3] / "docs" / "pages" / "scaling-out.md"


def test_scaling_out_examples_print_what_the_page_says() -> None:
    assert_marked_examples_print(
        PAGE,
        r"^<!--\s*docs-test:\s*skip:\s*needs Ray \(sekai-ray\)",
        min_blocks=5,
        registered=("Simulator-v0",),
    )
