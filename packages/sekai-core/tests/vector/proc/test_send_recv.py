"""ProcVecEnv.send() / recv(): asynchronous batches, in this process (fork).

Faults during send/recv (dead workers, raising sub-envs, Ctrl-C) are in test_faults_send_recv.py
and test_interrupts.py.
"""

from __future__ import annotations

import multiprocessing
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.core._rng import make_seed_sequence
from sekai.error import VecEnvWorkerError
from sekai.vector import ProcVecEnv, SyncVecEnv, VecRecvResult
from sekai.vector._batches import Arrival, Batches, send_plan
from sekai.vector._remote import Reply, decode_actions
from sekai.wrappers.autoreset import AutoReset

NUM_ENVS = 5


class Counter(sekai.Env):  # type: ignore[type-arg]
    """Observation ``[rank, t, noise]``; reward ``action + 10 * rank``; an episode ends every
    third step (terminated) and every fifth is truncated; the info echoes the action."""

    def __init__(self, rank: int = 0) -> None:
        self.observation_space = sekai.Box(-1e6, 1e6, shape=(3,))
        self.action_space = sekai.Discrete(3)
        self.rank = rank
        self.t = 0

    def _obs(self) -> Any:
        return np.array([self.rank, self.t, self.rng.random()], np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(self._obs(), {"rank": self.rank})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        info = {"action": int(action), "t": self.t}
        reward = int(action) + 10.0 * self.rank
        return sekai.StepResult(self._obs(), reward, self.t % 3 == 0, self.t % 5 == 0, info)


def _fns(n: int = NUM_ENVS) -> list[Any]:
    return [lambda rank=rank: Counter(rank) for rank in range(n)]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


class Reference:
    """Each sub-env alone in a SyncVecEnv, seeded as the VecEnv seeds it."""

    def __init__(self, seed: int, autoreset: bool = True) -> None:
        seeds = make_seed_sequence(seed, NUM_ENVS)
        self.vecs = [SyncVecEnv([fn], autoreset=autoreset) for fn in _fns()]
        for vec, sub_seed in zip(self.vecs, seeds):
            vec.reset(seed=[sub_seed])

    def check(self, result: VecRecvResult[Any], actions: dict[int, int]) -> None:
        """The rows of ``result`` are what stepping each sub-env alone gives."""
        for row, rank in enumerate(result.env_ids.tolist()):
            expected = self.vecs[rank].step([actions[rank]])
            assert np.array_equal(result.observations[row], expected.observations[0])
            assert result.rewards[row] == expected.rewards[0]
            assert result.terminated[row] == expected.terminated[0]
            assert result.truncated[row] == expected.truncated[0]
            assert _same(result.infos[row], expected.infos[0]), (rank, result.infos[row])


@pytest.fixture(params=[None, False], ids=["shared-memory", "pickled"])
def vec(request: pytest.FixtureRequest) -> Any:
    with ProcVecEnv(_fns(), context="fork", num_workers=2, shared_memory=request.param) as vec:
        yield vec


def test_recv_returns_batch_size_results_that_match_stepping_each_sub_env_alone(vec: Any) -> None:
    vec.reset(seed=7)
    reference = Reference(7)
    rng = np.random.default_rng(0)
    vec.send(actions := rng.integers(0, 3, NUM_ENVS))
    last = dict(enumerate(actions.tolist()))
    seen = 0
    for _ in range(40):  # enough steps for autoresets by termination and by truncation
        result = vec.recv(batch_size=2)
        assert isinstance(result, VecRecvResult)
        assert result.env_ids.dtype == np.intp and len(result.env_ids) == 2
        assert result.observations.shape == (2, 3) and result.rewards.dtype == np.float64
        reference.check(result, last)
        seen += int(result.dones.sum())
        actions = rng.integers(0, 3, 2)
        last.update(zip(result.env_ids.tolist(), actions.tolist()))
        vec.send(actions, result.env_ids)
    assert seen > 5


def test_a_finished_sub_env_reports_its_final_observation_and_info(vec: Any) -> None:
    vec.reset(seed=0)
    for _ in range(3):
        vec.send(np.full(2, 1), [3, 1])
        result = vec.recv(batch_size=2)
    assert sorted(result.env_ids.tolist()) == [1, 3]
    info = result.infos[int(np.flatnonzero(result.env_ids == 3)[0])]
    assert bool(result.terminated.all())
    assert info["final_info"] == {"action": 1, "t": 3}
    assert info["final_observation"][:2].tolist() == [3.0, 3.0]
    assert result.observations[:, 1].tolist() == [0.0, 0.0]  # the new episodes' first


def test_recv_hands_out_the_rest_of_a_workers_reply_in_the_next_call(vec: Any) -> None:
    vec.reset(seed=0)
    vec.send(np.arange(5) % 3)
    first = vec.recv(batch_size=1)
    rest = vec.recv(batch_size=4)
    ids = [*first.env_ids.tolist(), *rest.env_ids.tolist()]
    assert sorted(ids) == [0, 1, 2, 3, 4]
    assert len(rest.infos) == 4 and rest.observations.shape == (4, 3)
    assert [int(r) for r in rest.rewards.tolist()] == [
        (rank % 3) + 10 * rank for rank in rest.env_ids.tolist()
    ]


def test_a_frozen_sub_env_stays_frozen_per_recv_with_autoreset_off() -> None:
    vec = ProcVecEnv(_fns(), context="fork", num_workers=2, autoreset=False)
    with vec:
        vec.reset(seed=0)
        for _ in range(3):
            vec.send([1], [2])
            result = vec.recv(batch_size=1)
        assert vec.frozen.tolist() == [False, False, True, False, False]
        vec.send([1], [2])
        frozen = vec.recv(batch_size=1)
        assert (frozen.rewards.tolist(), frozen.infos) == ([0.0], [{}])
        assert np.array_equal(frozen.observations, result.observations)


def test_sub_envs_wrapped_in_auto_reset_never_freeze_per_recv_with_autoreset_off() -> None:
    fns = [lambda rank=rank: AutoReset(Counter(rank)) for rank in range(2)]
    with ProcVecEnv(fns, context="fork", num_workers=2, autoreset=False) as vec:
        vec.reset(seed=0)
        for _ in range(3):
            vec.send([1, 1])
            result = vec.recv(batch_size=2)
        assert result.dones.tolist() == [True, True]
        assert "final_observation" in result.infos[0]  # AutoReset's own reset
        assert vec.frozen.tolist() == [False, False]
        vec.send([1, 1])
        after = vec.recv(batch_size=2)
        assert [info["t"] for info in after.infos] == [1, 1]
        assert after.rewards.tolist() == [1.0 + 10 * rank for rank in after.env_ids.tolist()]


def test_send_refuses_bad_env_ids_and_sub_envs_already_in_flight(vec: Any) -> None:
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="out of range for 5 sub-envs"):
        vec.send([0], [5])
    with pytest.raises(ValueError, match="names a sub-env twice"):
        vec.send([0, 0], [1, 1])
    with pytest.raises(TypeError, match="env_ids must be a 1-D sequence"):
        vec.send([0], [[1]])
    with pytest.raises(ValueError, match=r"must have shape \(2,\) \(2 sub-envs"):
        vec.send([0, 1, 2], [0, 1])
    vec.send([0, 1], [3, 4])
    with pytest.raises(ValueError, match=r"sub-envs \[4\] already have an action in flight"):
        vec.send([0, 1], [0, 4])
    with pytest.raises(RuntimeError, match="only 2 sub-envs have actions in flight"):
        vec.recv(batch_size=3)


@pytest.mark.parametrize(
    ("env_ids", "value"),
    [
        (np.array([2**64 - 1], np.uint64), 2**64 - 1),
        (np.array([1, 2**63], np.uint64), 2**63),
        ([2**63], 2**63),
        ([0, 2**70], 2**70),
        ((1, -(2**70)), -(2**70)),
        ([-1, 2**63], -1),  # ints NumPy makes float64
        ([1, 2**63 + 1, -1], 2**63 + 1),
        (np.array([1, 2**70], dtype=object), 2**70),
    ],
    ids=[
        "uint64-max",
        "uint64-above-intp",
        "int-above-intp",
        "huge-int",
        "huge-negative",
        "both-sides-of-2**63",
        "both-sides-of-2**63-first",
        "object-array",
    ],
)
def test_env_ids_out_of_range_are_named_as_given_however_big(env_ids: Any, value: int) -> None:
    batches = Batches("ProcVecEnv", 4, None)
    message = rf"^env_ids holds {value}, out of range for 4 sub-envs\.$"
    with pytest.raises(ValueError, match=message):
        batches.env_ids(env_ids)
    assert batches.env_ids(np.array([3, 0], np.uint64)).tolist() == [3, 0]
    for not_ints in ([1.0], [True], [2**70, True], [2**70, 1.5]):
        with pytest.raises(TypeError, match="env_ids must be a 1-D sequence"):
            batches.env_ids(not_ints)


class _Kept:
    """An inbox that keeps the given replies."""

    def __init__(self, *arrivals: Arrival) -> None:
        self.arrivals = list(arrivals)

    def wait(self, timeout: float | None, what: str) -> None:
        raise AssertionError("nothing to wait for")

    def first(self) -> Arrival | None:
        return self.arrivals[0] if self.arrivals else None

    def drop(self) -> None:
        del self.arrivals[0]


def _lost_whole(batches: Batches, env_ids: list[int], ranks: list[int]) -> _Kept:
    """``env_ids`` sent, and their reply lost whole with an error for each of ``ranks``."""
    ids = np.array(env_ids, dtype=np.intp)
    batches.post(lambda posted: posted(ids))
    errors = [(rank, VecEnvWorkerError(rank, "RuntimeError", "lost")) for rank in ranks]
    return _Kept(Arrival(ids, None, Reply(None, errors)))


def _refused(batches: Batches) -> list[int]:
    """The sub-envs send() refuses for a failure recv() has not reported yet."""
    refused = []
    for rank in range(batches.num_envs):
        try:
            batches.env_ids([rank])
        except ValueError as e:
            assert str(e) == (
                f"sub-envs [{rank}] have a failure recv() has not reported yet: call recv() to "
                "receive it first."
            )
            refused.append(rank)
    return refused


def test_each_error_of_a_reply_lost_whole_frees_its_own_sub_env_once_raised() -> None:
    batches = Batches("ProcVecEnv", 4, None)
    inbox = _lost_whole(batches, [0, 1, 3], [0, 3])  # sub-env 1: no error of its own
    raised = []
    for _ in range(2):
        with pytest.raises(VecEnvWorkerError) as caught:
            batches.collect(inbox)
        raised.append(caught.value.rank)
        # the first error also reports sub-env 1, which no error names
        assert _refused(batches) == ([3] if raised == [0] else [])
    assert raised == [0, 3]
    batches.collect(inbox)  # nothing left to raise


def test_one_error_for_a_reply_lost_whole_reports_every_sub_env_it_answers_for() -> None:
    batches = Batches("ProcVecEnv", 4, None)
    for sent, named in (([1, 2], 1), ([2, 3], 0)):  # 0: its worker's first sub-env, not sent
        inbox = _lost_whole(batches, sent, [named])  # a worker's one error for them all
        batches.arrive(inbox.arrivals[0])
        assert _refused(batches) == sent
        with pytest.raises(RuntimeError, match=re.escape(f"sub-envs {sent} have failures in")):
            batches.check_idle("step")
        with pytest.raises(VecEnvWorkerError):
            batches.collect(_Kept())
        assert _refused(batches) == []
        batches.check_idle("step")


@pytest.mark.parametrize(
    ("actions", "env_ids", "rank"),
    [
        ([0, 7], [3, 4], 4),
        ([1, 200], [1, 2], 2),
        ([9, 1, 1], [4, 0, 2], 4),
        ([1, 1, -1], [4, 0, 2], 2),
    ],
)
def test_an_invalid_action_in_send_names_its_sub_env_not_its_row(
    vec: Any, actions: list[int], env_ids: list[int], rank: int
) -> None:
    vec.reset(seed=0)
    with pytest.raises(sekai.InvalidAction, match=rf"\(sub-env {rank}\)\.$") as caught:
        vec.send(actions, env_ids)
    assert caught.value.index == rank  # as for step(): the sub-env, whatever the order
    assert caught.value.action == actions[env_ids.index(rank)]
    assert not vec._batches.in_flight.any()  # nothing was sent
    vec.send([0] * len(env_ids), env_ids)
    assert sorted(vec.recv(batch_size=len(env_ids)).env_ids.tolist()) == sorted(env_ids)


@pytest.mark.parametrize("call", ["get_attr", "set_attr", "call", "step", "recv", "send", "reset"])
def test_calls_after_close_with_sends_pending_raise_vec_env_closed(vec: Any, call: str) -> None:
    vec.reset(seed=0)
    vec.send([1, 1], [0, 3])
    vec.close()
    calls: dict[str, Callable[[], Any]] = {
        "get_attr": lambda: vec.get_attr("t"),
        "set_attr": lambda: vec.set_attr("t", 0),
        "call": lambda: vec.call("t"),
        "step": lambda: vec.step([0] * 5),
        "recv": lambda: vec.recv(batch_size=1),
        "send": lambda: vec.send([0], [1]),
        "reset": lambda: vec.reset(),
    }
    with pytest.raises(sekai.VecEnvClosed):
        calls[call]()
    assert not vec._batches.in_flight.any()  # close() dropped them


def test_sync_calls_wait_for_recv_and_reset_drops_what_is_in_flight(vec: ProcVecEnv) -> None:
    with pytest.raises(sekai.ResetRequired):
        vec.send([0], [0])
    vec.reset(seed=0)
    vec.send([1, 1], [0, 1])
    calls: list[Callable[[], Any]] = [
        lambda: vec.step([0] * 5),
        lambda: vec.get_attr("t"),
        lambda: vec.call("t"),
    ]
    for call in calls:
        with pytest.raises(RuntimeError, match=r"while sub-envs \[0, 1\] have actions sent"):
            call()
    vec.reset(seed=0)
    assert vec.get_attr("t") == [0] * 5  # the sent steps ran, then reset() reset them
    assert vec.step([1] * 5).observations[:, 1].tolist() == [1.0] * 5


@pytest.mark.parametrize(
    ("options", "rank"),
    [({"lock": threading.Lock()}, 0), ([None, None, {"lock": threading.Lock()}, None, None], 2)],
    ids=["one-dict", "per-env"],
)
def test_a_reset_refused_for_options_that_cannot_be_pickled_changes_nothing(
    vec: ProcVecEnv, options: Any, rank: int
) -> None:
    vec.reset(seed=0)
    vec.send([1, 2], [0, 3])
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(
        TypeError,
        match=rf"^ProcVecEnv cannot send the options for sub-env {rank} to its worker process: "
        r"it cannot be pickled \(TypeError: cannot pickle '_thread.lock' object\)\.$",
    ):
        vec.reset(seed=[generator, 1, 2, 3, 4], options=options)
    assert generator.bit_generator.state == state  # no seed was drawn
    result = vec.recv(batch_size=2)  # the steps sent before are still received
    assert sorted(result.env_ids.tolist()) == [0, 3]
    assert sorted(result.rewards.tolist()) == [1.0, 32.0]
    assert vec.step([0] * 5).observations[:, 1].tolist() == [2.0, 1.0, 1.0, 2.0, 1.0]


def test_recv_batch_size_defaults_to_the_constructors() -> None:
    vec = ProcVecEnv(_fns(), context="fork", num_workers=5, batch_size=3)
    with vec:
        vec.reset(seed=0)
        vec.send([1] * 5)
        assert len(vec.recv().env_ids) == 3
        with pytest.raises(RuntimeError, match="waits for 3 results but only 2"):
            vec.recv()
        assert len(vec.recv(batch_size=2).env_ids) == 2
    with pytest.raises(ValueError, match=r"batch_size must be in \[1, 5\]"):
        ProcVecEnv(_fns(), context="fork", batch_size=6)


def test_send_and_recv_refuse_empty_env_ids_and_a_batch_size_that_is_no_int(vec: Any) -> None:
    vec.reset(seed=0)
    text = "env_ids is empty: send() needs at least one sub-env."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        vec.send(np.zeros(0, np.int64), env_ids=[])
    vec.send([1] * NUM_ENVS)
    for batch_size, name in [(True, "bool"), ("2", "str"), (2.0, "float")]:
        text = f"batch_size must be an int or None, got {name}."
        with pytest.raises(TypeError, match=f"^{re.escape(text)}$"):
            vec.recv(batch_size=batch_size)
    assert sorted(vec.recv(batch_size=NUM_ENVS).env_ids.tolist()) == list(range(NUM_ENVS))


def test_a_batch_size_that_is_no_int_is_refused_before_any_worker_starts() -> None:
    text = "batch_size must be an int or None, got bool."
    with pytest.raises(TypeError, match=f"^{re.escape(text)}$"):
        ProcVecEnv(_fns(), context="fork", batch_size=True)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("batch_size", [0, -1, NUM_ENVS + 1])
def test_a_batch_size_out_of_range_is_refused_before_any_worker_starts(batch_size: int) -> None:
    text = f"batch_size must be in [1, {NUM_ENVS}] (num_envs), got {batch_size}."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        ProcVecEnv(_fns(), context="fork", batch_size=batch_size)
    assert multiprocessing.active_children() == []


def test_recv_refuses_a_batch_size_out_of_range_and_takes_no_result(vec: Any) -> None:
    vec.reset(seed=0)
    vec.send([1] * NUM_ENVS)
    for batch_size in (0, -1, NUM_ENVS + 1):
        text = f"batch_size must be in [1, {NUM_ENVS}] (num_envs), got {batch_size}."
        with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
            vec.recv(batch_size=batch_size)
    assert sorted(vec.recv(batch_size=NUM_ENVS).env_ids.tolist()) == list(range(NUM_ENVS))


class Sleepy(Counter):
    """Counter, except that action 2 never answers (it sleeps until its worker is stopped)."""

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action == 2:
            time.sleep(60)
        return super().step(action)


def test_recv_stops_a_worker_that_does_not_answer_within_the_step_timeout(faulty: Any) -> None:
    fns = [lambda rank=rank: Sleepy(rank) for rank in range(4)]
    vec = ProcVecEnv(fns, context="fork", num_workers=2, step_timeout=0.2)
    vec.reset(seed=0)
    vec.send([0, 0, 2, 0])  # worker 1 (sub-envs 2 and 3) sleeps in sub-env 2's step
    with pytest.raises(TimeoutError) as info:
        vec.recv(batch_size=4)
    error = info.value
    assert isinstance(error, VecEnvWorkerError)
    assert (error.exc_type, error.worker, error.ranks) == ("TimeoutError", 1, (2, 3))
    assert str(error) == (
        "Worker 1 (sub-envs 2-3) raised TimeoutError: worker 1 did not answer step() within "
        "0.2 s and was stopped"
    )
    with pytest.raises(VecEnvWorkerError, match=r"^Worker 1 \(sub-envs 2-3\) raised Timeout"):
        vec.step([0] * 4)  # the stopped worker stays dead
    vec.close()
    assert vec.closed and multiprocessing.active_children() == []
    assert faulty.segments() == []


class Echo(sekai.Env):  # type: ignore[type-arg]
    """A float32 Box action space; the info reports the action's dtype and value."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Box(-1.0, 1.0, shape=(2,))

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        info = {"dtype": str(action.dtype), "value": action.tolist()}
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, info)


def test_workers_get_the_actions_step_and_send_are_given_as_sync_does() -> None:
    actions = np.array([[0.1, -0.3], [1 / 3, 0.7]])  # float64 for a float32 space
    with SyncVecEnv([Echo] * 2) as sync:
        sync.reset()
        expected = sync.step(actions).infos
    vec = ProcVecEnv([Echo] * 2, context="fork", num_workers=1)
    with vec:
        vec.reset()
        assert vec.step(actions).infos == expected
        vec.send(actions[::-1], [1, 0])
        assert sorted(vec.recv().infos, key=lambda info: info["value"]) == sorted(
            expected, key=lambda info: info["value"]
        )


_ACTIONS = [5, 0, 4, 1, 8]


def _rows(space: Any, part: Any) -> list[int]:
    """The actions a worker was sent, as a list of ints, whatever the space."""
    if isinstance(space, sekai.Dict):
        part = part["a"]
    elif isinstance(space, sekai.Tuple):
        part = part[0]
    return np.asarray(part).tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "space, batch",
    [
        (sekai.Discrete(9), np.array(_ACTIONS)),
        (sekai.Dict({"a": sekai.Discrete(9)}), {"a": np.array(_ACTIONS)}),
        (sekai.Tuple((sekai.Discrete(9),)), (np.array(_ACTIONS),)),
    ],
    ids=["raw-bytes", "dict", "tuple"],
)
@pytest.mark.parametrize(
    "env_ids, expected",
    [
        # As recv() hands them out: grouped by arrival, not by worker.
        ([3, 0, 2, 4, 1], [([0, 1], [0, 8]), ([3, 2], [5, 4]), ([4], [1])]),
        ([0, 1, 2, 3, 4], [([0, 1], [5, 0]), ([2, 3], [4, 1]), ([4], [8])]),
    ],
    ids=["shuffled", "in-order"],
)
def test_send_plan_posts_once_to_each_worker_with_its_rows_in_the_given_order(
    space: Any, batch: Any, env_ids: list[int], expected: list[tuple[list[int], list[int]]]
) -> None:
    # Row i of the batch is the action of sub-env env_ids[i]; three workers run 0-1, 2-3, 4.
    slices = [(0, 2), (2, 4), (4, 5)]
    plan = send_plan(space, batch, np.array(env_ids), slices)
    assert [worker for worker, _, _ in plan] == [0, 1, 2]
    assert [ids.tolist() for _, _, ids in plan] == [ids for ids, _ in expected]
    assert [positions for _, (positions, _), _ in plan] == [
        [rank - slices[worker][0] for rank in ids] for worker, (ids, _) in enumerate(expected)
    ]
    sent = [_rows(space, decode_actions(space, actions)) for _, (_, actions), _ in plan]
    assert sent == [actions for _, actions in expected]
