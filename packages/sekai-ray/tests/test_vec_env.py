"""RayVecEnv under the contract every backend shares: conformance with sync, autoreset, freezing,
the parent-side rules, attributes, the async pair and make_vec."""

from __future__ import annotations

import asyncio
import copy
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import ray

import sekai
from sekai.ray import RayVecEnv
from sekai.registry.api import default_registry
from sekai.testing.envs import KStepEnv, assert_kstep_autoreset
from sekai.vector import SyncVecEnv, VecRecordEpisodeStatistics
from sekai.vector._conformance import (
    GOAL,
    CounterEnv,
    assert_same_trajectory,
    record_trajectory,
    sync_counter_factory,
)
from sekai.wrappers.autoreset import AutoReset
from sekai.wrappers.time_limit import TimeLimit

pytestmark = pytest.mark.usefixtures("ray_cluster")
# The envs below are defined here, a module the actors cannot import: send them by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

HALF_CPU = {"CPU": 0.5}  # so that a test's actors fit next to any still being stopped
KS = [1, 2, 3, 5]


class GatedEnv(CounterEnv):
    """Its step waits until a file exists (env code; a test creates the file)."""

    def __init__(self, gate: str) -> None:
        super().__init__()
        self.gate = gate

    def step(self, action: Any) -> Any:
        while not os.path.exists(self.gate):
            time.sleep(0.01)
        return super().step(action)


def _ray(fns: list[Any], **kwargs: Any) -> RayVecEnv:
    kwargs.setdefault("resources_per_worker", HALF_CPU)
    return RayVecEnv(fns, **kwargs)


def _ksteps(autoreset: bool = True) -> RayVecEnv:
    return _ray([lambda k=k: KStepEnv(k) for k in KS], autoreset=autoreset, num_workers=2)


def _steps(vec: Any) -> list[int]:
    return [int(s) for s in vec.get_attr("steps")]


# -- conformance -------------------------------------------------------------------------------

NUM_ENVS = 5
SEEDS = [11, 12, 13, 14, 15]
STARTS = [{"start": s} for s in (0, 3, 7, 11, 14)]


def _trajectory(vec: Any, autoreset: bool) -> list[tuple[str, Any]]:
    try:
        return record_trajectory(
            vec,
            steps=300,
            seed=SEEDS,
            options=STARTS,
            action_seed=1,
            reset_every=None if autoreset else 37,  # without autoreset, reset to unfreeze
        )
    finally:
        vec.close()


@pytest.mark.parametrize("limit", [None, 12], ids=["no-limit", "limit-12"])
@pytest.mark.parametrize("autoreset", [True, False], ids=["autoreset", "frozen"])
@pytest.mark.parametrize("workers", [1, 2], ids=["1-actor", "2-actors"])
def test_ray_matches_sync_step_for_step(workers: int, autoreset: bool, limit: int | None) -> None:
    expected = _trajectory(sync_counter_factory(SyncVecEnv, limit)(NUM_ENVS, autoreset), autoreset)
    steps = [result for kind, result in expected if kind == "step"]
    assert any(r.terminated.any() for r in steps)  # the run covers episode ends...
    if limit is not None:
        assert any((r.truncated & ~r.terminated).any() for r in steps)  # ...and truncations

    def backend(env_fns: Any, autoreset: bool) -> RayVecEnv:
        return _ray(env_fns, autoreset=autoreset, num_workers=workers)

    vec = sync_counter_factory(backend, limit)(NUM_ENVS, autoreset)
    assert vec.num_workers == workers
    assert_same_trajectory(expected, _trajectory(vec, autoreset))


# -- autoreset and freezing ----------------------------------------------------------------------


def test_autoreset_loses_and_duplicates_no_step() -> None:
    steps = 30
    with _ksteps() as vec:
        assert_kstep_autoreset(vec, KS, steps)


def test_frozen_sub_env_that_refuses_steps_is_never_stepped() -> None:
    with _ksteps(autoreset=False) as vec:
        vec.reset(seed=0)
        for _ in range(max(KS) + 3):
            result = vec.step(np.ones(len(KS), int))
        assert result.dones.all()
        assert vec.frozen.all()
        assert result.observations[:, 1].tolist() == [float(k) for k in KS]
        assert result.rewards.tolist() == [0.0] * len(KS)
        assert result.infos == [{}] * len(KS)
        vec.reset()
        assert not vec.frozen.any()


def test_autoreset_wrapped_sub_env_is_reset_once_and_never_freezes() -> None:
    fns = [lambda: AutoReset(KStepEnv(2)), lambda: KStepEnv(2)]
    with _ray(fns, autoreset=False, num_workers=2) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        ended = vec.step([0, 0])
        assert ended.dones.tolist() == [True, True]
        assert vec.frozen.tolist() == [False, True]
        after = vec.step([0, 0])
        assert after.observations[0].tolist() == [1, 1]  # reset once by its wrapper, stepped on
        assert after.rewards.tolist() == [1.0, 0.0]
        assert [int(r) for r in vec.get_attr("resets")] == [2, 1]


# -- the parent-side rules -----------------------------------------------------------------------


def test_repr_spaces_and_worker_split() -> None:
    with _ray([CounterEnv] * 5, num_workers=2) as vec:
        assert repr(vec) == "RayVecEnv(num_envs=5)"
        assert len(vec) == vec.num_envs == 5
        assert vec.num_workers == 2
        assert vec.observation_space == sekai.Box(0.0, 1000.0, shape=(3,))
        assert vec.batch_action_space == sekai.MultiDiscrete([3] * 5)
        assert vec.metadata == CounterEnv.metadata
        assert vec.unwrapped is vec and vec.spec is None and vec.autoreset is True
        assert vec.call("_obs")[0].dtype == np.float32


class _Rendered(CounterEnv):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 7}


def test_metadata_is_the_sub_envs_own() -> None:
    with _ray([_Rendered] * 2, num_workers=2) as vec:
        assert vec.metadata == {"render_modes": ["ansi"], "render_fps": 7}


def test_checks_happen_in_the_parent_before_any_sub_env_steps() -> None:
    with _ray([CounterEnv] * 3, num_workers=2) as vec:
        with pytest.raises(sekai.ResetRequired) as required:
            vec.step([1, 1, 1])
        assert not isinstance(required.value, sekai.VecEnvWorkerError)
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"\(3,\)"):
            vec.step(np.array([1, 1]))
        with pytest.raises(sekai.InvalidAction) as invalid:
            vec.step([1, 1, 3])
        assert invalid.value.index == 2
        with pytest.raises(TypeError, match="Generator"):
            vec.reset(seed=np.random.default_rng(0))
        with pytest.raises(ValueError, match="2 entries for 3 sub-envs"):
            vec.reset(options=[{}, {}])
        assert _steps(vec) == [0, 0, 0]


def test_results_have_the_contract_dtypes_and_distinct_infos() -> None:
    with _ray([CounterEnv] * 3, num_workers=2) as vec:
        reset = vec.reset(options=[{"start": 4}, None, {"start": 9}])
        assert reset.observations[:, 0].tolist() == [4.0, 0.0, 9.0]
        assert [info["start"] for info in reset.infos] == [4, 0, 9]
        first = vec.step([1, 2, 0])
        second = vec.step([1, 2, 0])
        assert reset.observations.dtype == np.float32
        assert first.rewards.dtype == np.float64 and first.rewards.shape == (3,)
        assert first.terminated.dtype == bool and first.truncated.dtype == bool
        assert type(first.infos) is list and all(type(i) is dict for i in first.infos)
        assert len({id(i) for i in [*reset.infos, *first.infos, *second.infos]}) == 9
        assert first.infos[1]["position"] == 2


def test_finished_sub_env_freezes_and_ignores_its_action() -> None:
    with _ray([CounterEnv] * 2, autoreset=False, num_workers=2) as vec:
        vec.reset(options=[{"start": GOAL - 2}, {"start": 0}])
        last = vec.step([2, 1])
        assert last.terminated.tolist() == [True, False]
        assert vec.frozen.tolist() == [True, False]
        later = vec.step(np.array([7, 1]))  # the frozen sub-env's invalid action is ignored
        assert later.rewards[0] == 0.0 and later.infos[0] == {}
        assert np.array_equal(later.observations[0], last.observations[0])
        assert _steps(vec) == [1, 2]


def test_get_attr_set_attr_and_call_reach_every_sub_env() -> None:
    with _ray([CounterEnv] * 3, num_workers=2) as vec:
        vec.reset(options=[{"start": 3}, {"start": 5}, {"start": 6}])
        assert [int(p) for p in vec.get_attr("position")] == [3, 5, 6]
        vec.set_attr("position", [1, 2, 3])
        assert vec.get_attr("position") == [1, 2, 3]
        vec.set_attr("position", (4, 4))  # not a list of num_envs: one value for all
        assert vec.get_attr("position") == [(4, 4)] * 3
        vec.set_attr("position", 9)
        assert [obs[0] for obs in vec.call("_obs")] == [9.0] * 3
        assert vec.call("episodes") == [1, 1, 1]  # not callable: read
        with pytest.raises(AttributeError) as missing:
            vec.get_attr("no_such_attribute")
        assert isinstance(missing.value, sekai.VecEnvWorkerError)
        assert missing.value.rank == 0


def test_a_bad_time_limit_changes_no_sub_env_of_any_actor() -> None:
    with _ray([lambda: TimeLimit(CounterEnv(), 10)] * 3, num_workers=2) as vec:
        with pytest.raises(TypeError, match="max_episode_steps must be an int, got float"):
            vec.set_attr("max_episode_steps", [2, 2, 2.0])  # the first actor's were set
        assert vec.get_attr("max_episode_steps") == [10] * 3


@pytest.mark.parametrize(
    ("timeout", "limit"),
    [(float("inf"), None), (1e12, None), (np.float64(3e6), 3e6)],
    ids=["inf", "beyond-the-longest-wait", "numpy"],
)
def test_timeouts_of_any_length_work_and_inf_means_no_limit(
    timeout: float, limit: float | None
) -> None:
    vec = _ray([CounterEnv] * 2, num_workers=1, step_timeout=timeout, reset_timeout=timeout)
    with vec:
        assert vec.reset(options=STARTS[:2]).observations[:, 0].tolist() == [0, 3]
        assert vec.step([1, 1]).observations[:, 0].tolist() == [1, 4]
        vec.send([1, 1])
        assert vec.recv().observations[:, 0].tolist() == [2, 5]
        assert (vec._step_timeout, vec._reset_timeout) == (limit, limit)


# No float among them: a float key keeps the whole column of dicts from being packed.
_KEYS = [1, True, np.int64(1), "a", np.str_("a"), np.int32(1)]


class KeyEnv(CounterEnv):
    """Reports (and holds) a dict whose key equals the other sub-envs' but differs in type."""

    def __init__(self, rank: int) -> None:
        super().__init__()
        self.by_code = {_KEYS[rank]: rank}

    def step(self, action: Any) -> Any:
        result = super().step(action)
        info = {**result.info, "by_code": self.by_code}
        return sekai.StepResult(result.observation, result.reward, False, False, info)


def test_infos_and_attributes_keep_each_sub_envs_key_types() -> None:
    fns = [lambda i=i: KeyEnv(i) for i in range(len(_KEYS))]
    expected = [[(type(k), repr(k))] for k in _KEYS]
    with _ray(fns, num_workers=1) as vec:
        vec.reset()
        infos = vec.step([0] * len(_KEYS)).infos
        vec.send([0] * len(_KEYS))
        got = {
            "step": [info["by_code"] for info in infos],
            "recv": [info["by_code"] for info in vec.recv().infos],
            "get_attr": vec.get_attr("by_code"),
        }
    for name, dicts in got.items():
        assert [[(type(k), repr(k)) for k in d] for d in dicts] == expected, name


def test_closed_vec_env_raises_vec_env_closed_and_close_is_idempotent() -> None:
    vec = _ray([CounterEnv] * 2, num_workers=2)
    vec.reset(seed=0)
    vec.close()
    vec.close()
    assert vec.closed
    for call in (lambda: vec.reset(), lambda: vec.step([0, 0]), lambda: vec.get_attr("steps")):
        with pytest.raises(sekai.VecEnvClosed):
            call()


_COPIERS = {
    "pickle": pickle.dumps,
    "cloudpickle": ray.cloudpickle.dumps,
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


@pytest.mark.parametrize("how", list(_COPIERS))
def test_copying_or_pickling_raises_type_error_and_leaves_the_original_working(how: str) -> None:
    copier = _COPIERS[how]
    with _ray([CounterEnv] * 2, num_workers=2) as vec:
        vec.reset(seed=0)
        refused = r"^RayVecEnv owns Ray actors and cannot be copied or pickled .*build another"
        with pytest.raises(TypeError, match=refused):
            copier(vec)
        if how != "copy":  # a shallow copy of a wrapper shares the VecEnv, copying nothing
            with pytest.raises(TypeError, match=refused):
                copier(VecRecordEpisodeStatistics(vec))
        vec.step([1, 1])
        assert _steps(vec) == [1, 1] and not vec.closed


# -- the async pair ------------------------------------------------------------------------------


def test_async_pair_gives_the_sync_results() -> None:
    async def run(vec: RayVecEnv) -> list[Any]:
        return [
            await vec.async_reset(options=[{"start": 1}, {"start": 2}]),
            await vec.async_step([2, 1]),
        ]

    with _ray([CounterEnv] * 2, num_workers=2) as a, _ray([CounterEnv] * 2, num_workers=1) as b:
        reset, step = asyncio.run(run(a))
        assert_same_trajectory(
            [("reset", b.reset(options=[{"start": 1}, {"start": 2}])), ("step", b.step([2, 1]))],
            [("reset", reset), ("step", step)],
        )


def test_async_step_leaves_the_event_loop_running(tmp_path: Path) -> None:
    gate = tmp_path / "gate"

    async def run(vec: RayVecEnv) -> Any:
        stepping = asyncio.ensure_future(vec.async_step([1, 1]))
        await asyncio.sleep(0)  # let the step start
        with pytest.raises(sekai.AsyncCallPending):
            await vec.async_step([1, 1])
        gate.touch()  # only possible while the first step is awaited: the loop is free
        return await stepping

    # step_timeout: were the loop blocked, the gate would never open and the test would fail.
    with _ray([lambda: GatedEnv(str(gate))] * 2, num_workers=2, step_timeout=60) as vec:
        vec.reset(options={"start": 0})
        result = asyncio.run(run(vec))
        assert result.observations[:, 0].tolist() == [1.0, 1.0]


def test_a_cancelled_async_step_records_the_steps_the_actors_still_took(tmp_path: Path) -> None:
    gate = tmp_path / "gate"

    async def run(vec: Any) -> None:
        stepping = asyncio.ensure_future(vec.async_step([1, 0]))
        await asyncio.sleep(0.5)  # the actors have the step: they wait at the gate
        stepping.cancel()  # as asyncio.wait_for() does when it times out
        await asyncio.sleep(0.2)
        assert not stepping.done()  # Ray cannot take the step back: it awaits the actors
        gate.touch()
        with pytest.raises(asyncio.CancelledError):
            await stepping

    fns = [lambda: GatedEnv(str(gate))] * 2
    with _ray(fns, num_workers=2, autoreset=False, step_timeout=60) as ray_vec:
        vec = VecRecordEpisodeStatistics(ray_vec)
        vec.reset(options=[{"start": GOAL - 1}, {"start": 0}])
        asyncio.run(run(vec))
        assert _steps(vec) == [1, 1]
        # Recorded as for a step that raised: sub-env 0 ended its episode and is frozen (its
        # action is not checked), and the wrapper counted its return.
        assert vec.frozen.tolist() == [True, False]
        [episode] = vec.tracker.episodes
        assert (episode.episode_length, episode.episode_return) == (1, pytest.approx(0.4))
        assert vec.episode_lengths.tolist() == [0, 1]  # sub-env 1 goes on
        result = vec.step([99, 0])
        assert result.terminated.tolist() == [True, False] and _steps(vec) == [1, 2]


# -- make_vec and the plugin ---------------------------------------------------------------------


def test_plugin_registers_the_ray_mode_from_sekai_ray() -> None:
    [info] = [p for p in sekai.plugins.report().plugins if p.name == "ray"]
    assert (info.distribution, info.backends, info.envs) == ("sekai-ray", ("ray",), ())
    assert "ray" in default_registry().vectorization_modes()


def test_make_vec_builds_a_ray_vec_env_with_vector_kwargs() -> None:
    env_id = "RayTestCounter-v0"
    sekai.register(env_id, "sekai.vector._conformance:CounterEnv", max_episode_steps=4)
    try:
        vec = sekai.make_vec(
            env_id,
            3,
            vectorization_mode="ray",
            vector_kwargs={"num_workers": 2, "address": None, "resources_per_worker": HALF_CPU},
        )
        with vec:
            assert isinstance(vec, RayVecEnv) and vec.num_workers == 2
            assert vec.spec is not None and vec.spec.id == env_id
            vec.reset(seed=0)
            for _ in range(3):
                assert not vec.step([0, 0, 0]).truncated.any()
            assert vec.step([0, 0, 0]).truncated.all()  # the spec's TimeLimit, on the actors
    finally:
        sekai.deregister(env_id)


def test_vec_envs_left_open_are_closed_by_the_exit_hook() -> None:
    from sekai.ray import vec_env

    vec = _ray([CounterEnv] * 2, num_workers=1)
    assert vec in vec_env._LIVE
    vec_env._close_all()  # what atexit runs, before Ray's own exit handler
    assert vec.closed and vec not in vec_env._LIVE
