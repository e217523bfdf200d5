"""Cross-backend conformance: identical trajectories on every backend (the vector issue).

Each backend factory builds ``num_envs`` CounterEnvs (with a TimeLimit when a limit is given)
or the native CounterVecEnv. Other backends (proc, ray) run the same check in their own suites
with ``sekai.vector._conformance``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sekai.vector import AsyncVecEnv, SyncVecEnv, VecEnv
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
@pytest.mark.parametrize("backend", ["async", "native"])
def test_backend_matches_sync_over_1000_steps(
    backend: str, autoreset: bool, limit: int | None
) -> None:
    expected = _trajectory("sync", autoreset, limit)
    steps = [result for kind, result in expected if kind == "step"]
    assert any(r.terminated.any() for r in steps)  # the run covers episode ends...
    if limit is not None:
        assert any((r.truncated & ~r.terminated).any() for r in steps)  # ...and truncations
    assert_same_trajectory(expected, _trajectory(backend, autoreset, limit))
