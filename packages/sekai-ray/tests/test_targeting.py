"""RayVecEnv's hooks for single sub-envs (``_get_attr_at``, ``_set_attr_at``, ``_call_at``), what
``sekai.compat.to_sb3``'s ``indices`` use: only the actors of the named sub-envs are asked, and
only those sub-envs act; errors name their sub-env; a dead actor is reported."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import pytest
import ray

import sekai
from sekai.ray import RayVecEnv
from sekai.ray._pool import DIED
from sekai.vector._conformance import CounterEnv

pytestmark = pytest.mark.usefixtures("ray_cluster")
# The envs below are defined here, a module the actors cannot import: send them by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

HALF_CPU = {"CPU": 0.5}


class Poked(CounterEnv):
    """``poke`` adds to the position (a negative amount raises); ``die`` kills the actor."""

    pokes = 0

    def poke(self, amount: int, *, times: int = 1) -> int:
        if amount < 0:
            raise ValueError(f"cannot poke sub-env at {self.position} by {amount}")
        self.pokes += 1
        self.position += amount * times
        return int(self.position)

    def die(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


def _vec() -> RayVecEnv:
    """Five sub-envs in two actors: sub-envs 0-2 and 3-4."""
    vec = RayVecEnv([Poked] * 5, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(seed=0)
    return vec


def _asked(vec: RayVecEnv, monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The actors each later command is sent to, recorded as it is sent."""
    pool = vec._pool
    sent: list[list[int]] = []
    send = pool.send

    def spy(method: str, payloads: Any, handles: Any = None) -> Any:
        sent.append([h.index for h in (pool.handles if handles is None else handles)])
        return send(method, payloads, handles)

    monkeypatch.setattr(pool, "send", spy)
    return sent


def test_set_get_and_call_reach_only_the_named_sub_envs_and_their_actors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with _vec() as vec:
        asked = _asked(vec, monkeypatch)
        vec._set_attr_at([4, 1], "position", [40, 10])
        assert vec._get_attr_at([4, 0, 1], "position") == [40, 0, 10]
        assert vec._call_at([3], "poke", (2,), {"times": 3}) == [6]
        assert vec._get_attr_at([2, 1], "pokes") == [0, 0]
        assert asked == [[0, 1], [0, 1], [1], [0]]
        assert vec.get_attr("position") == [0, 10, 0, 6, 40]
        assert vec.get_attr("pokes") == [0, 0, 0, 1, 0]


def test_an_error_names_the_sub_env_that_raised() -> None:
    with _vec() as vec:
        vec._set_attr_at([4], "position", [7])
        with pytest.raises(ValueError, match="cannot poke sub-env at 0 by -1") as info:
            vec._call_at([4, 1], "poke", (-1,), {})
        assert isinstance(info.value, sekai.VecEnvWorkerError)
        assert (info.value.rank, info.value.worker) == (1, 0)  # the lowest of the two
        with pytest.raises(AttributeError) as missing:
            vec._get_attr_at([3], "missing")
        assert missing.value.rank == 3
        assert vec._call_at([4], "poke", (1,), {}) == [8]


def test_bad_env_ids_are_refused_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with _vec() as vec:
        asked = _asked(vec, monkeypatch)
        with pytest.raises(ValueError, match=r"env_ids names a sub-env twice: \[3, 3\]"):
            vec._call_at([3, 3], "poke", (1,), {})
        with pytest.raises(ValueError, match="env_ids holds 5, out of range for 5 sub-envs"):
            vec._set_attr_at([5], "position", [1])
        assert asked == []


def test_an_actor_dying_in_a_call_of_one_sub_env_is_named_and_every_later_call_raises() -> None:
    vec = _vec()
    with pytest.raises(sekai.VecEnvWorkerError) as caught:
        vec._call_at([4], "die", (), {})
    error = caught.value
    assert str(error) == f"Worker 1 (sub-envs 3-4) raised ActorDiedError: {DIED}"
    assert (error.rank, error.ranks, error.worker) == (3, (3, 4), 1)
    with pytest.raises(sekai.VecEnvWorkerError) as again:  # the other actor's sub-envs too
        vec._get_attr_at([0], "position")
    assert str(again.value) == str(error)
    vec.close()
    assert vec.closed


def test_to_sb3_reaches_single_sub_envs_of_a_ray_vec_env() -> None:
    pytest.importorskip("stable_baselines3")
    compat = pytest.importorskip("sekai.compat")
    venv = compat.to_sb3(_vec())
    try:
        assert venv.env_method("poke", 2, indices=[1]) == [2]
        venv.set_attr("position", 9, indices=[0])
        assert venv.get_attr("position") == [9, 2, 0, 0, 0]
        assert venv.get_attr("pokes", indices=[1, 3]) == [1, 0]
    finally:
        venv.close()
