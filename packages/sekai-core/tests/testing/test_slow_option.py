"""``--slow`` of ``sekai.testing.fixtures``: slow tests deselected without it, run first with it."""

from __future__ import annotations

import pytest

pytest_plugins = ("pytester",)

_SUITE = """
import pytest

def test_fast_one():
    pass

@pytest.mark.slow
def test_training():
    pass

def test_fast_two():
    pass
"""


def _run(pytester: pytest.Pytester, *args: str) -> list[str]:
    pytester.makeini("[pytest]\nmarkers =\n    slow: a training run\n")
    pytester.makepyfile(test_suite=_SUITE)
    result = pytester.runpytest("-p", "sekai.testing.fixtures", "-p", "no:xdist", "-v", *args)
    result.assert_outcomes(passed=3 if "--slow" in args else 2, deselected=0 if args else 1)
    return [line.split("::")[1].split()[0] for line in result.outlines if " PASSED" in line]


def test_slow_tests_are_deselected_without_the_option(pytester: pytest.Pytester) -> None:
    assert _run(pytester) == ["test_fast_one", "test_fast_two"]


def test_with_the_option_slow_tests_run_first(pytester: pytest.Pytester) -> None:
    assert _run(pytester, "--slow") == ["test_training", "test_fast_one", "test_fast_two"]
