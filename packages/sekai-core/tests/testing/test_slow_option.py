"""``--slow`` of ``sekai.testing.fixtures``: slow tests deselected without it, run first with it
(spread over the pytest-xdist workers)."""

from __future__ import annotations

import pytest

from sekai.testing.fixtures import spread_first

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


def test_spread_first_starts_each_workers_share_with_slow_tests() -> None:
    # 10 tests, 2 workers: worksteal hands out [0, 5) and [5, 10).
    order = spread_first(["A", "B", "C"], list("abcdefg"), workers=2)
    assert order == ["A", "C", "a", "b", "c", "B", "d", "e", "f", "g"]
    assert spread_first(["A", "B"], list("abcd"), workers=3) == ["A", "a", "B", "b", "c", "d"]


def test_spread_first_keeps_slow_tests_first_without_several_workers_or_room() -> None:
    assert spread_first(["A", "B"], ["a"], workers=1) == ["A", "B", "a"]
    assert spread_first(["A", "B", "C"], ["a", "b"], workers=2) == ["A", "B", "C", "a", "b"]


def test_with_the_option_under_two_workers_each_share_starts_with_a_slow_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")  # what pytest-xdist sets on a worker
    pytester.makeini("[pytest]\nmarkers =\n    slow: a training run\n")
    pytester.makepyfile(
        test_suite=_SUITE + "\n@pytest.mark.slow\ndef test_other_training():\n    pass\n"
    )
    result = pytester.runpytest("-p", "sekai.testing.fixtures", "-p", "no:xdist", "-v", "--slow")
    ran = [line.split("::")[1].split()[0] for line in result.outlines if " PASSED" in line]
    assert ran == ["test_training", "test_fast_one", "test_other_training", "test_fast_two"]
