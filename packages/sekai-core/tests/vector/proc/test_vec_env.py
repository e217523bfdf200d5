"""ProcVecEnv in this process (fork): arguments, workers, observations, attributes, closing.

Faults (dead, hung or raising workers, signals, leaks) are in test_faults.py, each in its own
process; the cross-backend conformance run is in tests/vector/test_conformance.py.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import errno
import gc
import multiprocessing
import os
import pickle
import threading
import warnings
from typing import Any

import cloudpickle
import numpy as np
import pytest

import sekai
from sekai.vector import ProcVecEnv, SyncVecEnv, VecEnv, _packing
from sekai.vector._conformance import assert_same_trajectory
from sekai.vector.wrappers import VecRecordEpisodeStatistics
from sekai.wrappers.autoreset import AutoReset
from sekai.wrappers.time_limit import TimeLimit

# pytest-xdist's workers run a thread of their own, so from Python 3.12 on os.fork() warns in
# them; the tests that record every warning around a fork leave that one out.
FORK_WITH_THREADS = r".*use of fork\(\) may lead to deadlocks"


class SpaceEnv(sekai.Env):  # type: ignore[type-arg]
    """Observes seeded samples of any space (Box parts as float64 to test the casts); an
    episode ends every third step."""

    metadata = {"render_fps": 9}  # noqa: RUF012

    def __init__(self, space: sekai.Space[Any], rank: int = 0) -> None:
        self.observation_space = copy.deepcopy(space)  # its own generator, as in a worker
        self.action_space = sekai.Discrete(2)
        self.rank = rank
        self.t = 0
        self.level = 1.0

    def _obs(self) -> Any:
        return _widen(self.observation_space.sample())

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        return sekai.ResetResult(self._obs(), {"rank": self.rank})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        return sekai.StepResult(self._obs(), 0.5 * action, self.t % 3 == 0, False, {"t": self.t})

    def scaled(self, factor: float, *, offset: float = 0.0) -> float:
        return self.level * factor + offset

    def pid(self) -> int:
        import os

        return os.getpid()


def _widen(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _widen(part) for key, part in value.items()}
    if isinstance(value, tuple):
        return tuple(_widen(part) for part in value)
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return value


SPACES = {
    "box-float32": sekai.Box(-1.0, 1.0, shape=(2, 3)),
    "box-uint8": sekai.Box(0, 255, shape=(4,), dtype=np.uint8),
    "discrete": sekai.Discrete(5, start=-2),
    "multi-discrete": sekai.MultiDiscrete([3, 4]),
    "multi-binary": sekai.MultiBinary(3),
    "dict": sekai.Dict(
        pos=sekai.Box(-1.0, 1.0, shape=(2,)),
        k=sekai.Discrete(3),
        nest=sekai.Tuple([sekai.MultiBinary(2), sekai.Box(0.0, 1.0, shape=(1,))]),
    ),
    "masked-box": sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3),
    "sequence": sekai.Sequence(sekai.Discrete(3), max_length=4),
}


LOCK = threading.Lock()  # cannot be pickled, even by cloudpickle


def _factories(space: sekai.Space[Any], n: int) -> list[Any]:
    return [lambda i=i: SpaceEnv(space, i) for i in range(n)]


def _run(vec: VecEnv) -> list[tuple[str, Any]]:
    try:
        trajectory: list[tuple[str, Any]] = [("reset", vec.reset(seed=[1, 2, 3]))]
        for t in range(5):
            trajectory.append(("step", vec.step([t % 2, 1, 0])))
        return trajectory
    finally:
        vec.close()


@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
@pytest.mark.parametrize("space", SPACES.values(), ids=SPACES)
def test_observations_have_sync_vec_envs_dtypes_shapes_and_values(
    space: sekai.Space[Any], shared_memory: bool | None
) -> None:
    expected = _run(SyncVecEnv(_factories(space, 3)))
    vec = ProcVecEnv(
        _factories(space, 3), context="fork", num_workers=2, shared_memory=shared_memory
    )
    assert vec.shared_memory is (shared_memory is None and name_of(space) != "sequence")
    assert_same_trajectory(expected, _run(vec))  # incl. final_observation after autoreset


def name_of(space: sekai.Space[Any]) -> str:
    return next(name for name, known in SPACES.items() if known is space)


def test_shared_memory_true_needs_a_fixed_size_space_and_leaves_no_worker() -> None:
    with pytest.raises(TypeError, match=r"shared_memory=True needs .*got Sequence\(Discrete"):
        ProcVecEnv(_factories(SPACES["sequence"], 2), context="fork", shared_memory=True)
    assert multiprocessing.active_children() == []


def _no_room_for_observations(
    monkeypatch: pytest.MonkeyPatch, space: Any, n: int, code: int = errno.ENOSPC
) -> None:
    """/dev/shm has room for the mailboxes, not for the observations of ``n`` sub-envs
    (``code``: ENOMEM where the memory limit is what has none)."""
    from sekai.vector.proc.shm import SharedBatch

    size = SharedBatch.size(space, n)

    def fallocate(fd: int, offset: int, length: int) -> None:
        if length == size:
            raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "posix_fallocate", fallocate, raising=False)


def test_shared_memory_true_without_room_in_dev_shm_fails_at_construction() -> None:
    space = SPACES["box-uint8"]
    with pytest.MonkeyPatch.context() as patch:
        _no_room_for_observations(patch, space, 3)
        with pytest.raises(OSError) as caught:
            ProcVecEnv(_factories(space, 3), context="fork", shared_memory=True)
    assert caught.value.errno == errno.ENOSPC
    message = str(caught.value)
    assert message.startswith(
        "[Errno 28] ProcVecEnv cannot reserve 195 bytes of shared memory for the observations "
        "of 3 sub-envs: /dev/shm has "
    )
    assert (
        "Pass shared_memory=False to pickle the observations instead, use fewer sub-envs or "
        "smaller observations, or give /dev/shm more room (with Docker: docker run "
        "--shm-size=1g ...)." in message
    )
    assert multiprocessing.active_children() == []


def test_shared_memory_true_over_the_memory_limit_names_that_limit() -> None:
    space = SPACES["box-uint8"]
    with pytest.MonkeyPatch.context() as patch:
        _no_room_for_observations(patch, space, 3, errno.ENOMEM)
        with pytest.raises(OSError) as caught:
            ProcVecEnv(_factories(space, 3), context="fork", shared_memory=True)
    assert caught.value.errno == errno.ENOMEM
    assert str(caught.value) == (
        "[Errno 12] ProcVecEnv cannot reserve 195 bytes of shared memory for the observations "
        "of 3 sub-envs: the memory limit of this process (cgroup) was reached. Pass "
        "shared_memory=False to pickle the observations instead, use fewer sub-envs or smaller "
        "observations, or raise that memory limit (with Docker: docker run --memory=...)."
    )
    assert multiprocessing.active_children() == []


def test_shared_memory_none_without_room_in_dev_shm_warns_and_pickles() -> None:
    space = SPACES["dict"]
    expected = _run(SyncVecEnv(_factories(space, 3)))
    with pytest.MonkeyPatch.context() as patch:
        _no_room_for_observations(patch, space, 3)
        with pytest.warns(sekai.SharedMemoryWarning) as caught:
            warnings.filterwarnings("ignore", FORK_WITH_THREADS, DeprecationWarning)
            vec = ProcVecEnv(_factories(space, 3), context="fork", num_workers=2)
    assert [w.filename for w in caught] == [__file__]  # the caller's line
    assert "it pickles the observations instead (vec.shared_memory is False)" in str(
        caught[0].message
    )
    assert vec.shared_memory is False
    assert_same_trajectory(expected, _run(vec))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"context": "threads"}, ValueError, "context must be one of"),
        ({"context": 3}, TypeError, "context must be a start method name"),
        ({"close_timeout": -1}, ValueError, "close_timeout must be >= 0"),
        ({"close_timeout": None}, TypeError, "close_timeout must be a number of seconds"),
        ({"step_timeout": 0}, ValueError, "step_timeout must be > 0"),
        ({"reset_timeout": "1"}, TypeError, "reset_timeout must be a number of seconds or None"),
        ({"num_workers": 0}, ValueError, "num_workers must be >= 1"),
        ({"num_workers": True}, TypeError, "num_workers must be an int or None"),
        ({"shared_memory": "yes"}, TypeError, "shared_memory must be None or a bool"),
        ({"autoreset": 1}, TypeError, "autoreset must be a bool"),
    ],
)
def test_bad_arguments_are_rejected_before_any_worker_starts(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        ProcVecEnv(_factories(SPACES["discrete"], 2), **{"context": "fork", **kwargs})
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("env_fns", "error", "match"),
    [
        ([], ValueError, "needs at least one env factory"),
        ("CartPole-v1", TypeError, "expects a list of zero-argument callables"),
        (
            {SpaceEnv},
            TypeError,
            r"^ProcVecEnv: env_fns must be given in order, got a set of 1 item,",
        ),
        ([SpaceEnv, 3], TypeError, r"env_fns\[1\] must be a zero-argument callable"),
        (
            [SpaceEnv, lambda lock=LOCK: lock],
            TypeError,
            r"env_fns\[1\] cannot be sent to a worker process: it cannot be pickled",
        ),
    ],
)
def test_bad_factories_are_rejected_before_any_worker_starts(
    env_fns: Any, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        ProcVecEnv(env_fns, context="fork")
    assert multiprocessing.active_children() == []


def test_a_factory_returning_another_space_is_named_across_workers() -> None:
    fns = [
        lambda: SpaceEnv(SPACES["discrete"]),
        lambda: SpaceEnv(SPACES["discrete"]),
        lambda: SpaceEnv(SPACES["multi-binary"]),
    ]
    with pytest.raises(ValueError, match="sub-env 2 has observation_space MultiBinary"):
        ProcVecEnv(fns, context="fork", num_workers=3)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("num_workers", [1, 2, 4])
def test_the_sub_env_blamed_for_other_spaces_does_not_depend_on_the_workers(
    num_workers: int,
) -> None:
    # As SyncVecEnv: every sub-env is compared with sub-env 0, whichever worker built it.
    kinds = ["discrete", "discrete", "multi-binary", "discrete"]
    fns = [lambda kind=kind: SpaceEnv(SPACES[kind]) for kind in kinds]
    expected = r"^ProcVecEnv: sub-env 2 has observation_space MultiBinary.*, but sub-env 0 has"
    with pytest.raises(ValueError, match=expected) as caught:
        ProcVecEnv(fns, context="fork", num_workers=num_workers)
    assert type(caught.value) is ValueError
    with pytest.raises(ValueError, match=expected.replace("ProcVecEnv", "SyncVecEnv")):
        sekai.SyncVecEnv(fns)
    assert multiprocessing.active_children() == []


def test_factories_of_one_worker_returning_the_same_env_object_are_refused() -> None:
    # Pickled together, the factories of one worker's slice share the env they return.
    env = SpaceEnv(SPACES["discrete"])
    fns = [lambda: env, lambda: env]
    expected = r"env_fns\[0\]\(\) and env_fns\[1\]\(\) returned the same env object"
    with pytest.raises(ValueError, match=expected):
        ProcVecEnv(fns, context="fork", num_workers=1)
    assert multiprocessing.active_children() == []


def test_a_factory_returning_a_non_env_raises_type_error_naming_it() -> None:
    fns: list[Any] = [lambda: SpaceEnv(SPACES["discrete"]), lambda: "not an env"]
    with pytest.raises(TypeError, match=r"env_fns\[1\]\(\) returned str, not a sekai.Env"):
        ProcVecEnv(fns, context="fork", num_workers=1)


@pytest.mark.parametrize(
    ("num_envs", "num_workers", "expected"),
    [(5, 2, [0, 0, 0, 1, 1]), (3, 8, [0, 1, 2]), (4, 1, [0, 0, 0, 0]), (3, None, [0, 1, 2])],
)
def test_sub_envs_are_split_evenly_and_in_order_between_workers(
    num_envs: int, num_workers: int | None, expected: list[int]
) -> None:
    vec = ProcVecEnv(
        _factories(SPACES["discrete"], num_envs), context="fork", num_workers=num_workers
    )
    with vec:
        pids = vec.call("pid")
        workers = list(dict.fromkeys(pids))  # in order of first appearance
        assert [workers.index(pid) for pid in pids] == expected
        assert vec.num_workers == len(set(pids))
        assert vec.get_attr("rank") == list(range(num_envs))
        assert (vec.context, repr(vec)) == ("fork", f"ProcVecEnv(num_envs={num_envs})")


@pytest.mark.parametrize("cores", [1, 2, None])
def test_num_workers_none_is_one_per_sub_env_whatever_the_cores(
    cores: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)  # the documented default ignores them
    with ProcVecEnv(_factories(SPACES["discrete"], 5), context="fork") as vec:
        assert vec.num_workers == 5
        assert len(set(vec.call("pid"))) == 5


def test_attributes_are_reached_through_each_sub_envs_wrappers() -> None:
    fns = [lambda i=i: TimeLimit(SpaceEnv(SPACES["discrete"], i), 7 + i) for i in range(3)]
    with ProcVecEnv(fns, context="fork", num_workers=2) as vec:
        assert vec.metadata == {"render_fps": 9}
        assert vec.get_attr("max_episode_steps") == [7, 8, 9]
        vec.set_attr("level", [1.0, 2.0, 3.0])
        assert vec.call("scaled", 2.0, offset=1.0) == [3.0, 5.0, 7.0]
        vec.set_attr("level", (4.0, 5.0, 6.0))  # not a list: one value for every sub-env
        assert vec.get_attr("level") == [(4.0, 5.0, 6.0)] * 3
        assert vec.call("rank") == [0, 1, 2]  # not callable: its value
        assert vec.call("get_attr", name="rank") == [0, 1, 2]  # a keyword called name
        with pytest.raises(AttributeError, match="has no attribute 'missing'") as info:
            vec.get_attr("missing")
        assert isinstance(info.value, sekai.VecEnvWorkerError)
        assert info.value.rank == 0


def test_errors_of_the_parent_are_raised_directly_before_anything_is_sent() -> None:
    with ProcVecEnv(_factories(SPACES["discrete"], 2), context="fork") as vec:
        with pytest.raises(sekai.ResetRequired) as required:
            vec.step([0, 1])
        assert type(required.value) is sekai.ResetRequired
        vec.reset(seed=0)
        with pytest.raises(sekai.InvalidAction) as invalid:
            vec.step([0, 5])
        assert type(invalid.value) is sekai.InvalidAction and invalid.value.index == 1
        with pytest.raises(ValueError, match="must have shape"):
            vec.step([0, 1, 1])
        assert [info["t"] for info in vec.step([1, 1]).infos] == [1, 1]


@pytest.mark.parametrize(
    ("kwargs", "limit"),
    [
        ({"close_timeout": float("inf")}, None),
        ({"close_timeout": 1e10}, None),
        ({"close_timeout": 3e6}, None),  # longer than one poll() may wait (24.8 days)
        ({"step_timeout": float("inf"), "reset_timeout": float("inf")}, None),
        ({"step_timeout": 1e10, "reset_timeout": np.float64(3e6)}, None),
        ({"step_timeout": 60}, 60.0),
    ],
    ids=["close-inf", "close-1e10", "close-35-days", "step-inf", "step-long", "step-60"],
)
def test_timeouts_of_any_length_work_and_inf_means_no_limit(
    kwargs: dict[str, Any], limit: float | None
) -> None:
    vec = ProcVecEnv(_factories(SPACES["discrete"], 2), context="fork", **kwargs)
    with vec:
        assert vec.reset(seed=0).observations.shape == (2,)
        assert [info["t"] for info in vec.step([1, 1]).infos] == [1, 1]
        vec.send([0, 0])
        assert vec.recv().rewards.tolist() == [0.0, 0.0]
        assert vec._step_timeout == limit
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("name", ["step_timeout", "reset_timeout", "close_timeout"])
def test_a_nan_timeout_is_rejected(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} must be "):
        ProcVecEnv(_factories(SPACES["discrete"], 2), context="fork", **{name: float("nan")})
    assert multiprocessing.active_children() == []


_KEYS = [1, True, 1.0, np.int64(1), "a", np.str_("a"), (1,), (True,)]


class KeyEnv(SpaceEnv):
    """Reports (and holds) a dict whose one key equals the other sub-envs' but differs in type."""

    def __init__(self, rank: int) -> None:
        super().__init__(SPACES["discrete"], rank)
        self.by_code = {_KEYS[rank % len(_KEYS)]: rank}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        result = super().reset(seed=seed, options=options)
        return sekai.ResetResult(result.observation, {"by_code": self.by_code})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        result = super().step(action)
        info = {"by_code": self.by_code}
        return sekai.StepResult(result.observation, 0.0, False, False, info)


@pytest.mark.parametrize("workers", [1, 2])
def test_infos_and_attributes_keep_each_sub_envs_key_types(workers: int) -> None:
    """Keys that compare equal (1, True, 1.0, ...) but differ in type arrive as they were."""
    fns = [lambda i=i: KeyEnv(i) for i in range(len(_KEYS))]
    with SyncVecEnv(fns) as sync:
        expected = [
            [(type(k), repr(k)) for k in info["by_code"]] for info in sync.reset(seed=0).infos
        ]
    with ProcVecEnv(fns, context="fork", num_workers=workers) as vec:
        got = {
            "reset": [info["by_code"] for info in vec.reset(seed=0).infos],
            "step": [info["by_code"] for info in vec.step([0] * len(_KEYS)).infos],
            "get_attr": vec.get_attr("by_code"),
        }
    for name, dicts in got.items():
        assert [[(type(k), repr(k)) for k in d] for d in dicts] == expected, name


class LayoutEnv(SpaceEnv):
    """Reports an array in a layout of its own (Fortran order in odd sub-envs) and a tuple of a
    length of its own."""

    def step(self, action: Any) -> sekai.StepResult[Any]:
        result = super().step(action)
        matrix = np.arange(6.0).reshape(2, 3)
        info = {
            "matrix": np.asfortranarray(matrix) if self.rank % 2 else matrix,
            "ranks": tuple(range(self.rank + 1)),
        }
        return sekai.StepResult(result.observation, 0.0, False, False, info)


def test_infos_of_one_worker_keep_each_sub_envs_array_layout_and_tuple_length() -> None:
    """A worker's infos travel column by column; values that cannot share a column (arrays of
    other layouts, tuples of other lengths) still arrive as each sub-env returned them."""
    fns = [lambda i=i: LayoutEnv(SPACES["discrete"], i) for i in range(4)]
    with ProcVecEnv(fns, context="fork", num_workers=1) as vec:
        vec.reset(seed=0)
        infos = vec.step([0] * 4).infos
    assert [info["ranks"] for info in infos] == [(0,), (0, 1), (0, 1, 2), (0, 1, 2, 3)]
    assert [info["matrix"].flags.f_contiguous for info in infos] == [False, True, False, True]
    for info in infos:
        np.testing.assert_array_equal(info["matrix"], np.arange(6.0).reshape(2, 3))


def test_a_closed_env_raises_vec_env_closed_and_closing_again_does_nothing() -> None:
    vec = ProcVecEnv(_factories(SPACES["box-float32"], 2), context="fork")
    vec.reset(seed=0)
    vec.close()
    vec.close()
    assert vec.closed
    assert multiprocessing.active_children() == []
    for call in (lambda: vec.reset(), lambda: vec.step([0, 0]), lambda: vec.get_attr("t")):
        with pytest.raises(sekai.VecEnvClosed):
            call()


_NOT_COPIED = (
    r"^ProcVecEnv owns worker processes and cannot be copied or pickled \(a copy would share "
    r"them, and closing it would stop them\); build another ProcVecEnv with the same factories"
)
COPIERS = {
    "pickle": pickle.dumps,
    "cloudpickle": cloudpickle.dumps,
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


class Closes(sekai.Env):  # type: ignore[type-arg]
    """Marks ``path`` (a file) when it is closed."""

    def __init__(self, path: str) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)
        self.path = path

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})

    def close(self) -> None:
        with open(self.path, "w"):
            pass


def test_a_proc_vec_env_collected_without_close_closes_its_sub_envs_and_stops_its_workers(
    tmp_path: Any, faulty: Any
) -> None:
    marks = [str(tmp_path / f"closed-{i}") for i in range(2)]
    vec = ProcVecEnv([lambda i=i: Closes(marks[i]) for i in range(2)], context="fork")
    vec.reset(seed=0)
    assert len(multiprocessing.active_children()) == 2
    del vec
    gc.collect()
    # close() ran: the sub-envs were closed in their workers, which were stopped and joined.
    assert [os.path.exists(mark) for mark in marks] == [True, True]
    assert multiprocessing.active_children() == []
    assert faulty.segments() == []


@pytest.mark.parametrize("how", list(COPIERS))
def test_copying_or_pickling_raises_type_error_and_leaves_the_original_working(how: str) -> None:
    # A half-built copy used to close the original's pipes when collected (deepcopy), and a
    # shallow copy's __del__ stopped the shared workers.
    copier = COPIERS[how]
    with ProcVecEnv(_factories(SPACES["discrete"], 2), context="fork") as vec:
        vec.reset(seed=0)
        with pytest.raises(TypeError, match=_NOT_COPIED):
            copier(vec)
        if how != "copy":  # a shallow copy of a wrapper shares the VecEnv, copying nothing
            with pytest.raises(TypeError, match=_NOT_COPIED):
                copier(VecRecordEpisodeStatistics(vec))
        gc.collect()
        assert [info["t"] for info in vec.step([1, 0]).infos] == [1, 1]
        assert vec.get_attr("t") == [1, 1] and not vec.closed
    assert vec.closed and multiprocessing.active_children() == []


def test_without_autoreset_a_finished_sub_env_stays_frozen_in_its_worker() -> None:
    with ProcVecEnv(
        _factories(SPACES["discrete"], 2), context="fork", num_workers=1, autoreset=False
    ) as vec:
        vec.reset(seed=0)
        for _ in range(3):
            last = vec.step([1, 1])
        assert last.dones.tolist() == [True, True]
        frozen = vec.step([1, 0])
        assert frozen.rewards.tolist() == [0.0, 0.0] and frozen.infos == [{}, {}]
        assert frozen.dones.tolist() == [True, True] and vec.frozen.tolist() == [True, True]
        assert vec.get_attr("t") == [3, 3]
        assert vec.reset().dones.tolist() == [False, False]


class RefusesTwo(SpaceEnv):
    """As ``SpaceEnv``; action 2 raises."""

    def __init__(self, space: sekai.Space[Any], rank: int = 0) -> None:
        super().__init__(space, rank)
        self.action_space = sekai.Discrete(3)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action == 2:
            raise ValueError("refuses action 2")
        return super().step(action)


@pytest.mark.parametrize("num_workers", [1, 2])
def test_a_sub_env_ending_its_episode_in_a_step_that_raises_elsewhere_freezes(
    num_workers: int,
) -> None:
    """Rule 9: sub-env 0's step counts although sub-env 1 raised in it (in the same worker or
    in another), so without autoreset sub-env 0 is frozen, as on a SyncVecEnv."""
    fns = [lambda i=i: RefusesTwo(SPACES["discrete"], i) for i in range(2)]
    with ProcVecEnv(fns, context="fork", num_workers=num_workers, autoreset=False) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        vec.step([0, 0])
        with pytest.raises(ValueError, match="refuses action 2") as caught:
            vec.step([0, 2])  # sub-env 0's third step ends its episode
        assert caught.value.rank == 1  # type: ignore[attr-defined]
        assert vec.frozen.tolist() == [True, False]
        assert vec.get_attr("t") == [3, 2]
        last = vec.step([0, 0])  # sub-env 0 stays frozen; sub-env 1 ends its episode
        assert last.rewards.tolist() == [0.0, 0.0] and last.infos == [{}, {"t": 3}]
        assert vec.frozen.tolist() == [True, True]


def test_sub_envs_wrapped_in_auto_reset_never_freeze() -> None:
    fns = [lambda i=i: AutoReset(SpaceEnv(SPACES["discrete"], i)) for i in range(2)]
    with ProcVecEnv(fns, context="fork", num_workers=1, autoreset=False) as vec:
        vec.reset(seed=0)
        for _ in range(3):
            result = vec.step([1, 1])
        assert result.dones.tolist() == [True, True]
        assert "final_observation" in result.infos[0]  # AutoReset's own reset
        assert vec.frozen.tolist() == [False, False]
        assert [info["t"] for info in vec.step([1, 1]).infos] == [1, 1]


def test_async_step_and_reset_run_the_workers() -> None:
    async def run(vec: ProcVecEnv) -> list[int]:
        await vec.async_reset(seed=0)
        result = await vec.async_step([1, 0])
        return [info["t"] for info in result.infos]

    with ProcVecEnv(_factories(SPACES["discrete"], 2), context="fork") as vec:
        assert asyncio.run(run(vec)) == [1, 1]


@pytest.mark.parametrize(
    ("kwargs", "culprit"),
    [
        ({"size": threading.Lock()}, "the keyword argument 'size'"),
        (
            {"wrappers": [sekai.OrderEnforcing, lambda env, lock=threading.Lock(): env]},  # noqa: B008
            r"wrappers\[1\] \(<function .*<lambda>",
        ),
    ],
)
def test_make_vec_names_the_argument_that_cannot_be_sent_to_the_workers(
    sekai_line_registry: Any, kwargs: dict[str, Any], culprit: str
) -> None:
    with pytest.raises(
        TypeError,
        match=rf"^ProcVecEnv: env_fns\[0\] \({culprit}.* of make_vec\('testing/Line-v0'\)\) "
        "cannot be sent to a worker process: it cannot be pickled with cloudpickle",
    ):
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode="proc", **kwargs)
    assert multiprocessing.active_children() == []


def test_make_vec_builds_it_with_vector_kwargs(sekai_line_registry: Any) -> None:
    vec = sekai.make_vec(
        "testing/Line-v0",
        num_envs=4,
        vectorization_mode="proc",
        vector_kwargs={"num_workers": 2, "context": "fork"},
    )
    try:
        assert isinstance(vec, ProcVecEnv)
        assert (vec.num_workers, vec.shared_memory) == (2, True)
        assert vec.spec is not None and vec.spec.id == "testing/Line-v0"
        result = vec.reset(seed=0)
        assert (result.observations.shape, result.observations.dtype) == ((4, 1), np.float32)
        assert vec.get_attr("max_episode_steps") == [20] * 4  # make()'s TimeLimit, per sub-env
    finally:
        vec.close()


def test_make_vec_without_room_in_dev_shm_warns_at_the_callers_line(
    sekai_line_registry: Any, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Through make_vec the ProcVecEnv is built deeper in sekai than by a direct call: the
    # warnings still name the caller's line, not sekai's.
    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    with pytest.warns(sekai.SharedMemoryWarning) as caught:
        warnings.filterwarnings("ignore", FORK_WITH_THREADS, DeprecationWarning)
        vec = sekai.make_vec(
            "testing/Line-v0", 2, vectorization_mode="proc", vector_kwargs={"context": "fork"}
        )
    vec.close()
    blocks = 2 if transport == "mail" else 1  # the mailboxes, the observations
    assert [w.filename for w in caught] == [__file__] * blocks
    assert vec.shared_memory is False


@pytest.mark.parametrize("shared_memory", [True, False])
def test_a_steps_plain_infos_are_unpickled_only_when_read(
    shared_memory: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[int] = []
    load = _packing.Deferred.load
    monkeypatch.setattr(_packing.Deferred, "load", lambda self: loads.append(1) or load(self))
    fns = _factories(SPACES["discrete"], 8)
    with ProcVecEnv(fns, context="fork", num_workers=2, shared_memory=shared_memory) as vec:
        vec.reset(seed=0)
        result = vec.step([1] * 8)
        vec.step([0] * 8)
        assert loads == []  # two steps, no info read
        assert result.infos == [{"t": 1}] * 8
        assert len(loads) == 2  # one reply per worker
        assert result.infos == [{"t": 1}] * 8
        assert len(loads) == 2


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class LevelEnv(SpaceEnv):
    """Observes and reports an IntEnum: not plain data, so it travels pickled with the reply."""

    def step(self, action: Any) -> sekai.StepResult[Any]:
        result = super().step(action)
        level = _Level.HIGH if action else _Level.LOW
        info = {**result.info, "level": level}
        return sekai.StepResult(level, result.reward, result.terminated, result.truncated, info)


@pytest.mark.parametrize("shared_memory", [None, False], ids=["shared", "pickled"])
def test_infos_and_observations_that_are_not_plain_data_arrive_as_themselves(
    shared_memory: bool | None,
) -> None:
    fns = [lambda i=i: LevelEnv(sekai.Discrete(3), i) for i in range(4)]
    with ProcVecEnv(fns, context="fork", num_workers=2, shared_memory=shared_memory) as vec:
        vec.reset(seed=0)
        result = vec.step([1, 0, 1, 1])
    levels = [info["level"] for info in result.infos]
    assert levels == [_Level.HIGH, _Level.LOW, _Level.HIGH, _Level.HIGH]
    assert all(type(level) is _Level for level in levels)
    assert result.observations.tolist() == [2, 1, 2, 2]
