"""Cross-backend conformance: identical trajectories on every backend (the vector issue).

Each backend factory builds ``num_envs`` CounterEnvs (with a TimeLimit when a limit is given)
or the native CounterVecEnv. ProcVecEnv runs with one worker for every sub-env, and with three
workers sharing the five sub-envs (fork: the start method does not matter here). Ray runs the
same check in its own suite with ``sekai.vector._conformance``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pytest

from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv, VecEnv, VecResetResult
from sekai.vector._conformance import (
    CounterVecEnv,
    assert_same_trajectory,
    record_trajectory,
    sync_counter_factory,
)

BackendFactory = Callable[[int | None], Callable[[int, bool], VecEnv]]

BACKENDS: dict[str, BackendFactory] = {
    "sync": lambda limit: sync_counter_factory(SyncVecEnv, limit),
    "async": lambda limit: sync_counter_factory(AsyncVecEnv, limit),
    "native": lambda limit: (
        lambda n, autoreset: CounterVecEnv(n, autoreset=autoreset, max_episode_steps=limit)
    ),
    "proc-1-worker": lambda limit: sync_counter_factory(
        functools.partial(ProcVecEnv, context="fork", num_workers=1), limit
    ),
    "proc-3-workers": lambda limit: sync_counter_factory(
        functools.partial(ProcVecEnv, context="fork", num_workers=3), limit
    ),
}

NUM_ENVS = 5
SEEDS = [11, 12, 13, 14, 15]
STARTS = [{"start": s} for s in (0, 3, 7, 11, 14)]


def _trajectory(backend: str, autoreset: bool, limit: int | None) -> list[tuple[str, object]]:
    vec = BACKENDS[backend](limit)(NUM_ENVS, autoreset)
    try:
        return record_trajectory(
            vec,
            steps=1000,
            seed=SEEDS,
            options=STARTS,
            action_seed=1,
            reset_every=None if autoreset else 37,  # without autoreset, reset to unfreeze
        )
    finally:
        vec.close()


@pytest.mark.parametrize("limit", [None, 12], ids=["no-limit", "limit-12"])
@pytest.mark.parametrize("autoreset", [True, False], ids=["autoreset", "frozen"])
@pytest.mark.parametrize("backend", ["async", "native", "proc-1-worker", "proc-3-workers"])
def test_backend_matches_sync_over_1000_steps(
    backend: str, autoreset: bool, limit: int | None
) -> None:
    expected = _trajectory("sync", autoreset, limit)
    steps = [result for kind, result in expected if kind == "step"]
    assert any(r.terminated.any() for r in steps)  # the run covers episode ends...
    if limit is not None:
        assert any((r.truncated & ~r.terminated).any() for r in steps)  # ...and truncations
    assert_same_trajectory(expected, _trajectory(backend, autoreset, limit))


def _reset(observations: object, infos: list[dict[str, object]]) -> tuple[str, object]:
    return ("reset", VecResetResult(observations, infos))


@pytest.mark.parametrize(
    ("expected", "actual", "message"),
    [
        (
            [_reset(np.zeros(2, np.float32), [{}, {}])] * 2,
            [_reset(np.zeros(2, np.float32), [{}, {}])],
            None,
        ),
        (
            [_reset(np.zeros(2, np.float32), [{}, {}])],
            [_reset(np.zeros(2, np.float64), [{}, {}])],
            "dtype float32 != float64",
        ),
        (
            [_reset(np.zeros(1), [{"a": 1, "b": 2}])],
            [_reset(np.zeros(1), [{"b": 2, "a": 1}])],
            "keys",
        ),
        (
            [_reset(np.zeros(1), [{"x": float("nan")}])],
            [_reset(np.zeros(1), [{"x": 1.0}])],
            "nan != 1.0",
        ),
    ],
    ids=["length", "dtype", "key-order", "nan-vs-number"],
)
def test_assert_same_trajectory_refuses_a_difference(
    expected: list[tuple[str, object]], actual: list[tuple[str, object]], message: str | None
) -> None:
    assert_same_trajectory(expected, expected)
    with pytest.raises(AssertionError, match=message):
        assert_same_trajectory(expected, actual)
