"""ProcVecEnv's hooks for single sub-envs (``_get_attr_at``, ``_set_attr_at``, ``_call_at``):
what the SB3 bridge's ``indices`` use. Only the workers of the named sub-envs are asked, and only
those sub-envs act. A worker dying in such a call is in test_faults.py."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import sekai
from sekai.vector import ProcVecEnv
from sekai.vector._conformance import CounterEnv
from sekai.wrappers.time_limit import TimeLimit


class Poked(CounterEnv):
    """A CounterEnv whose ``poke`` adds to its position, and refuses a negative amount."""

    def poke(self, amount: int, *, times: int = 1) -> int:
        if amount < 0:
            raise ValueError(f"cannot poke sub-env at {self.position} by {amount}")
        self.position += amount * times
        return int(self.position)


def _vec() -> ProcVecEnv:
    """Five sub-envs in two workers: sub-envs 0-2 and 3-4."""
    vec = ProcVecEnv([Poked] * 5, context="fork", num_workers=2)
    vec.reset(seed=0)
    return vec


def _seqs(vec: ProcVecEnv) -> list[int]:
    """How many commands each worker was sent."""
    assert vec._pool is not None
    return [handle.seq for handle in vec._pool.workers]


def test_set_get_and_call_reach_only_the_named_sub_envs_in_their_order() -> None:
    with _vec() as vec:
        vec._set_attr_at([4, 1], "position", [40, 10])
        assert vec.get_attr("position") == [0, 10, 0, 0, 40]
        assert vec._get_attr_at([4, 0, 1], "position") == [40, 0, 10]
        assert vec._call_at([3, 1], "poke", (2,), {"times": 3}) == [6, 16]
        assert vec.get_attr("position") == [0, 16, 0, 6, 40]


def test_only_the_workers_of_the_named_sub_envs_are_asked() -> None:
    with _vec() as vec:
        before = _seqs(vec)
        vec._call_at([4], "poke", (1,), {})
        assert [a - b for a, b in zip(_seqs(vec), before)] == [0, 1]
        vec._set_attr_at([0, 2], "position", [5, 5])
        assert [a - b for a, b in zip(_seqs(vec), before)] == [1, 1]
        vec._get_attr_at([1, 3], "position")
        assert [a - b for a, b in zip(_seqs(vec), before)] == [2, 2]
        # The next call of every worker still finds them in step (mailboxes or pipes).
        assert vec.call("poke", 0) == [5, 0, 5, 0, 1]
        assert vec.step([0] * 5).observations.shape == (5, 3)


def test_an_error_names_the_sub_env_that_raised_after_the_others_ran() -> None:
    with _vec() as vec:
        vec._set_attr_at([3], "position", [7])
        with pytest.raises(ValueError, match="cannot poke sub-env at 7 by -1") as info:
            vec._call_at([4, 3], "poke", (-1,), {})
        assert isinstance(info.value, sekai.VecEnvWorkerError)
        assert (info.value.rank, info.value.worker) == (3, 1)
        assert "Worker traceback" in str(info.value)
        with pytest.raises(AttributeError, match="no attribute 'missing'") as missing:
            vec._get_attr_at([2], "missing")
        assert missing.value.rank == 2  # the slice's position, made the VecEnv's rank
        assert vec._call_at([1, 3], "poke", (1,), {}) == [1, 8]  # nothing stuck


def test_a_bad_time_limit_changes_no_sub_env_of_any_worker() -> None:
    with ProcVecEnv([lambda: TimeLimit(Poked(), 10)] * 5, context="fork", num_workers=2) as vec:
        with pytest.raises(TypeError, match="max_episode_steps must be an int, got float") as info:
            vec.set_attr("max_episode_steps", [2, 2, 2, 2, 2.0])  # the first worker's were set
        assert info.value.rank == 4
        assert vec.get_attr("max_episode_steps") == [10] * 5
        vec._set_attr_at([4, 1], "max_episode_steps", [3, 4])
        assert vec.get_attr("max_episode_steps") == [10, 4, 10, 10, 3]


def test_a_value_that_cannot_be_sent_names_its_sub_env() -> None:
    with _vec() as vec:
        with pytest.raises(TypeError, match=r"value of 'position' for sub-env 4 to its worker"):
            vec._set_attr_at([1, 4], "position", [1, threading.Lock()])
        assert vec.get_attr("position") == [0] * 5  # nothing was sent


@pytest.mark.parametrize(
    ("env_ids", "error", "match"),
    [
        ([5], ValueError, "env_ids holds 5, out of range for 5 sub-envs"),
        ([-1], ValueError, "env_ids holds -1, out of range"),
        ([1, 1], ValueError, r"env_ids names a sub-env twice: \[1, 1\]"),
        (["1"], TypeError, "env_ids must hold sub-env indices"),
    ],
)
def test_bad_env_ids_are_refused_before_anything_is_sent(
    env_ids: list[Any], error: type[Exception], match: str
) -> None:
    with _vec() as vec:
        before = _seqs(vec)
        with pytest.raises(error, match=match):
            vec._call_at(env_ids, "poke", (1,), {})
        assert _seqs(vec) == before


def test_a_closed_env_and_sub_envs_in_flight_are_refused() -> None:
    vec = _vec()
    vec.send([0], [3])
    with pytest.raises(RuntimeError, match="call"):
        vec._call_at([0], "poke", (1,), {})
    vec.recv(batch_size=1)
    vec.close()
    with pytest.raises(sekai.VecEnvClosed):
        vec._get_attr_at([0], "position")
