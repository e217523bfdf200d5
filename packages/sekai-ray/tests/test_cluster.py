"""Connecting to Ray, resources per worker, and the arguments RayVecEnv checks before any actor."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.ray import RayVecEnv, _cluster
from sekai.ray._cluster import actor_options, check_feasible, connect, default_num_workers
from sekai.ray.vec_env import _slices
from sekai.vector._conformance import CounterEnv


def test_actor_options_map_ray_resource_names() -> None:
    assert actor_options(None) == {"num_cpus": 1.0}
    assert actor_options({"CPU": 2, "GPU": 0.5, "memory": 2**30, "licence": 1}) == {
        "num_cpus": 2.0,
        "num_gpus": 0.5,
        "memory": float(2**30),
        "resources": {"licence": 1.0},
    }
    assert actor_options({"GPU": 1})["num_cpus"] == 1.0  # a CPU unless told otherwise


@pytest.mark.parametrize(
    ("resources", "error", "match"),
    [
        ([("CPU", 1)], TypeError, "must be a dict of resource name -> amount"),
        ({1: 1}, TypeError, "got a key 1"),
        ({"CPU": -1}, ValueError, r"resources_per_worker\['CPU'\] must be a number >= 0"),
        ({"GPU": "1"}, ValueError, "must be a number >= 0, got '1'"),
        ({"CPU": True}, ValueError, "must be a number >= 0"),
        ({"GPU": float("nan")}, ValueError, r"\[.GPU.\] must be a number >= 0, got nan"),
    ],
)
def test_actor_options_reject_bad_resources(resources: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        actor_options(resources)


def test_actor_options_take_numpy_amounts() -> None:
    options = actor_options({"CPU": np.int64(2), "GPU": np.float32(0.5)})
    assert (options["num_cpus"], options["num_gpus"]) == (2.0, 0.5)
    with pytest.raises(ValueError, match=r"must be a number >= 0, got np\.True_"):
        actor_options({"CPU": np.True_})


def test_slices_split_the_sub_envs_evenly_in_order() -> None:
    assert _slices(5, 2) == [(0, 3), (3, 5)]
    assert _slices(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert _slices(7, 1) == [(0, 7)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_workers": 0}, ValueError, "num_workers must be >= 1, got 0"),
        ({"num_workers": 1.0}, TypeError, "num_workers must be an int or None, got float"),
        ({"step_timeout": 0}, ValueError, "step_timeout must be > 0 seconds"),
        ({"reset_timeout": "5"}, TypeError, "reset_timeout must be a number of seconds"),
        ({"step_timeout": float("nan")}, ValueError, "step_timeout must be > 0 seconds"),
        ({"reset_timeout": -1.0}, ValueError, "reset_timeout must be > 0 seconds"),
        ({"autoreset": 1}, TypeError, "autoreset must be a bool, got int"),
        ({"resources_per_worker": {"CPU": -2}}, ValueError, "must be a number >= 0"),
        ({"address": 6379}, TypeError, r"address must be a Ray cluster address \(str\)"),
    ],
)
def test_bad_arguments_are_rejected_before_ray_is_used(
    kwargs: dict[str, Any], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        RayVecEnv([CounterEnv] * 2, **kwargs)


def test_env_fns_must_be_callables() -> None:
    with pytest.raises(TypeError, match=r"RayVecEnv: env_fns\[1\] must be a zero-argument"):
        RayVecEnv([CounterEnv, CounterEnv()])
    with pytest.raises(ValueError, match="RayVecEnv needs at least one env factory"):
        RayVecEnv([])


def test_connect_reuses_the_running_cluster(ray_cluster: ModuleType) -> None:
    assert connect(None) is ray_cluster
    assert connect("127.0.0.1:1") is ray_cluster  # already connected: used as it is


def test_default_workers_are_capped_by_the_cluster_cpus(ray_cluster: ModuleType) -> None:
    cpus = int(ray_cluster.cluster_resources()["CPU"])
    assert default_num_workers(ray_cluster, 100, {"num_cpus": 1.0}) == cpus
    assert default_num_workers(ray_cluster, 100, {"num_cpus": 0.5}) == 2 * cpus
    assert default_num_workers(ray_cluster, 1, {"num_cpus": 1.0}) == 1
    assert default_num_workers(ray_cluster, 5, {"num_cpus": 0.0}) == 5


def test_default_workers_fit_the_free_cpus_beside_another_vec_env(
    ray_cluster: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpus = int(ray_cluster.cluster_resources()["CPU"])
    with RayVecEnv([CounterEnv], num_workers=1) as train:  # holds one CPU
        train.reset()
        with RayVecEnv([CounterEnv] * (2 * cpus)) as evaluation:
            assert evaluation.num_workers == max(1, cpus - 1)
        monkeypatch.setattr(_cluster, "SETTLE_SECONDS", 0.2)
        with pytest.raises(ValueError, match=r"\(free: .*use fewer workers \(num_workers\)"):
            check_feasible(ray_cluster, actor_options({"CPU": cpus}), 1)
    with RayVecEnv([CounterEnv] * (2 * cpus)) as again:  # the CPUs just freed count again
        assert again.num_workers == cpus


def test_requests_the_local_cluster_cannot_hold_fail_at_once(ray_cluster: ModuleType) -> None:
    cpus = ray_cluster.cluster_resources()["CPU"]
    with pytest.raises(ValueError, match=f"needs {2 * cpus:g} CPU .*it has {cpus:g}"):
        check_feasible(ray_cluster, actor_options({"CPU": cpus}), 2)
    with pytest.raises(ValueError, match=r"needs 1 GPU \(it has 0\)"):
        RayVecEnv([CounterEnv] * 2, num_workers=1, resources_per_worker={"GPU": 1})
    check_feasible(ray_cluster, actor_options({"CPU": cpus / 2}), 2)  # fits: no error


@pytest.mark.usefixtures("ray_cluster")
def test_more_workers_than_sub_envs_are_capped() -> None:
    with RayVecEnv([CounterEnv] * 2, num_workers=5, resources_per_worker={"CPU": 0.5}) as vec:
        assert vec.num_workers == 2


def test_after_ray_shutdown_every_actor_is_lost_and_no_cluster_is_started(
    ray_cluster: ModuleType,
) -> None:
    vec = RayVecEnv([CounterEnv] * 3, num_workers=2, resources_per_worker={"CPU": 0.5})
    vec.reset()
    vec.send([0, 0], env_ids=[0, 2])
    try:
        ray_cluster.shutdown()
        calls = [
            lambda: vec.step([0, 0, 0]),
            lambda: vec.recv(),
            lambda: vec.reset(),
            lambda: vec.get_attr("position"),
        ]
        for call in calls:  # as for a dead actor: the first one's error, every time
            with pytest.raises(sekai.VecEnvWorkerError, match="Ray was shut down") as caught:
                call()
            assert (caught.value.worker, list(caught.value.ranks)) == (0, [0, 1])
        assert not ray_cluster.is_initialized()  # Ray did not start a cluster of its own
        vec.close()
    finally:
        # The next local cluster (for the tests after this one), started as RayVecEnv starts
        # it: a request it cannot hold fails at once, as on the first one.
        with pytest.raises(ValueError, match=r"needs 1 GPU \(it has 0\)"):
            RayVecEnv([CounterEnv], resources_per_worker={"GPU": 1})
    assert ray_cluster.is_initialized()


def test_actors_on_another_cluster_than_the_current_one_are_lost(ray_cluster: ModuleType) -> None:
    with RayVecEnv([CounterEnv] * 2, num_workers=1, resources_per_worker={"CPU": 0.5}) as vec:
        vec.reset()
        cluster, vec._pool.cluster = vec._pool.cluster, "session_gone"  # as after a new init
        with pytest.raises(sekai.VecEnvWorkerError, match="connected to another Ray cluster"):
            vec.step([0, 0])
        vec._pool.cluster = cluster  # so that close() stops the actor, which is still there


class _FakeCluster:
    """``cluster_resources()`` and ``available_resources()`` of a cluster that frees CPUs one
    poll after another (the actors of a RayVecEnv closed a moment ago)."""

    def __init__(self, cpus: float, free: list[float]) -> None:
        self.cpus = cpus
        self.free = free
        self.polls = 0

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": self.cpus}

    def available_resources(self) -> dict[str, float]:
        self.polls += 1
        return {"CPU": self.free[min(self.polls, len(self.free)) - 1]}


def test_default_workers_are_at_least_one_on_a_busy_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cluster, "_killed_at", -float("inf"))  # busy, and nothing freeing
    busy: Any = _FakeCluster(4.0, [0.0])
    assert default_num_workers(busy, 8, {"num_cpus": 1.0}) == 1
    assert busy.polls == 1  # read once: no wait for CPUs being freed
    assert default_num_workers(busy, 3, {"num_cpus": 0.0}) == 3  # asks for no CPU: one each


def test_default_workers_wait_for_the_cpus_of_actors_killed_a_moment_ago(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cluster, "_killed_at", -float("inf"))
    cluster: Any = _FakeCluster(4.0, [1.0, 2.0, 4.0])
    assert default_num_workers(cluster, 8, {"num_cpus": 1.0}) == 1  # none killed: no wait
    _cluster.actors_killed()
    cluster.polls = 0
    assert default_num_workers(cluster, 8, {"num_cpus": 1.0}) == 4
    assert cluster.polls == 3
