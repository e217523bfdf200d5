"""``--slow`` of ``sekai.testing.fixtures``: slow tests deselected without it, run first with it
(spread over the pytest-xdist workers)."""

from __future__ import annotations

import pytest

from sekai.testing.fixtures import in_thread, interrupted_once, spread_first

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


def test_spread_first_starts_every_share_with_a_slow_test_when_they_are_uneven() -> None:
    # 11 tests over 3 workers: worksteal's shares are [0, 3), [3, 7) and [7, 11).
    order = spread_first(["A", "B", "C"], list("abcdefgh"), workers=3)
    assert [order[0], order[3], order[7]] == ["A", "B", "C"]
    assert sorted(order) == sorted(["A", "B", "C", *"abcdefgh"])


def test_interrupted_once_raises_on_the_first_call_only_and_in_thread_keeps_it() -> None:
    calls: list[int] = []

    def count() -> int:
        calls.append(1)
        return len(calls)

    fn = interrupted_once(count)
    thread, got = in_thread(fn)
    thread.join(5)
    assert len(got) == 1 and isinstance(got[0], KeyboardInterrupt)
    assert calls == []  # cut short before fn ran
    assert fn() == 1
    assert fn() == 2
