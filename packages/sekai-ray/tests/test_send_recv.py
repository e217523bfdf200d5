"""RayVecEnv.send() / recv(): asynchronous batches, against the test cluster."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest
import ray

import sekai
from sekai.ray import RayVecEnv
from sekai.ray._pool import DIED
from sekai.testing.fixtures import interrupted_once
from sekai.vector import SyncVecEnv, VecRecvResult, _batches
from sekai.vector._conformance import CounterEnv

pytestmark = pytest.mark.usefixtures("ray_cluster")
# The envs below are defined here, a module the actors cannot import: send them by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

HALF_CPU = {"CPU": 0.5}
STARTS = [{"start": s} for s in (0, 3, 7, 11)]


class FragileEnv(CounterEnv):
    """Action 2 raises ValueError; action 1 at position 13 kills the actor's process."""

    def step(self, action: Any) -> Any:
        if int(action) == 2:
            raise ValueError("action 2 is not supported")
        if int(action) == 1 and self.position == 13:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().step(action)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


def test_recv_results_match_stepping_each_sub_env_alone() -> None:
    alone = [SyncVecEnv([CounterEnv]) for _ in STARTS]
    for vec, start in zip(alone, STARTS):
        vec.reset(options=[start])
    fns = [CounterEnv] * 4
    with RayVecEnv(fns, num_workers=2, batch_size=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS)
        vec.send(np.ones(4, dtype=np.int64))
        last = dict.fromkeys(range(4), 1)
        for step in range(30):
            result = vec.recv()
            assert isinstance(result, VecRecvResult) and len(result.env_ids) == 2
            for row, rank in enumerate(result.env_ids.tolist()):
                expected = alone[rank].step([last[rank]])
                assert np.array_equal(result.observations[row], expected.observations[0])
                assert result.rewards[row] == expected.rewards[0]
                assert result.terminated[row] == expected.terminated[0]
                assert _same(result.infos[row], expected.infos[0])
            actions = (result.env_ids + step) % 3
            last.update(zip(result.env_ids.tolist(), actions.tolist()))
            vec.send(actions, result.env_ids)
        with pytest.raises(RuntimeError, match=r"step\(\) cannot run while sub-envs"):
            vec.step(np.ones(4, dtype=np.int64))
        vec.reset(options=STARTS)  # drops what is in flight
        assert vec.step(np.ones(4, dtype=np.int64)).observations[:, 0].tolist() == [1, 4, 8, 12]


def test_a_reset_drops_the_replies_of_steps_sent_before_it() -> None:
    with RayVecEnv([CounterEnv] * 4, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS)
        vec.send(np.full(4, 2, dtype=np.int64))
        vec.reset(options=STARTS)  # the actors reply to those steps first: dropped
        vec.send(np.ones(4, dtype=np.int64))
        result = vec.recv(batch_size=4)
        assert sorted(zip(result.env_ids.tolist(), result.observations[:, 0].tolist())) == [
            (0, 1.0),
            (1, 4.0),
            (2, 8.0),
            (3, 12.0),
        ]


def test_a_reset_refused_for_options_that_cannot_be_pickled_changes_nothing() -> None:
    with RayVecEnv([CounterEnv] * 4, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS)
        vec.send([1, 2], [0, 3])
        generator = np.random.default_rng(5)
        state = generator.bit_generator.state
        options = [{}, {"lock": threading.Lock()}, {}, {}]
        with pytest.raises(TypeError, match="cannot send the options for sub-env 1 to its"):
            vec.reset(seed=[generator, 1, 2, 3], options=options)
        assert generator.bit_generator.state == state  # no seed was drawn
        result = vec.recv(batch_size=2)  # the steps sent before are still received
        assert sorted(zip(result.env_ids.tolist(), result.observations[:, 0].tolist())) == [
            (0, 1.0),
            (3, 13.0),
        ]
        assert vec.step(np.ones(4, dtype=np.int64)).observations[:, 0].tolist() == [2, 4, 8, 14]


def test_a_sub_env_raising_in_a_partial_batch_is_raised_and_the_others_come_next() -> None:
    with RayVecEnv([FragileEnv] * 3, num_workers=1, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS[:3])
        vec.send([1, 2], [2, 1])
        with pytest.raises(ValueError, match="action 2 is not supported") as caught:
            vec.recv(batch_size=2)
        assert isinstance(caught.value, sekai.VecEnvWorkerError) and caught.value.rank == 1
        rest = vec.recv(batch_size=1)
        assert rest.env_ids.tolist() == [2] and rest.observations[0, 0] == 8.0
        vec.send([1], [1])  # no longer in flight
        assert vec.recv(batch_size=1).env_ids.tolist() == [1]


def test_an_actor_dying_between_send_and_recv_is_raised_by_recv_and_later_calls() -> None:
    with RayVecEnv([FragileEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=[{"start": 0}, {"start": 13}])
        vec.send([1], [1])
        for call in (lambda: vec.recv(batch_size=1), lambda: vec.send([1], [0])):
            with pytest.raises(sekai.VecEnvWorkerError) as caught:
                call()
            assert str(caught.value) == f"Sub-env 1 raised ActorDiedError: {DIED}"


# -- Ctrl-C, simulated deterministically --------------------------------------------------------


def _unpickle_mark(position: int, gate: str) -> int:
    try:
        os.remove(gate)  # only this process unpickles replies: the actors pickle them
    except FileNotFoundError:
        return position
    raise KeyboardInterrupt  # where a Ctrl-C lands while recv() unpickles a reply


class Mark:
    """An info entry that arrives as its position; unpickling it raises KeyboardInterrupt
    once per time the gate file is created."""

    def __init__(self, position: int, gate: str) -> None:
        self.position = position
        self.gate = gate

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle_mark, (self.position, self.gate))


class MarkedEnv(CounterEnv):
    def __init__(self, gate: str) -> None:
        super().__init__()
        self.gate = gate

    def step(self, action: Any) -> Any:
        result = super().step(action)
        info = {**result.info, "mark": Mark(self.position, self.gate)}
        return sekai.StepResult(result.observation, result.reward, False, False, info)


def _marks(result: Any) -> dict[int, tuple[float, int]]:
    return {
        rank: (float(result.observations[row, 0]), info["mark"])
        for row, (rank, info) in enumerate(zip(result.env_ids.tolist(), result.infos))
    }


def test_ctrl_c_while_recv_unpickles_a_reply_loses_nothing(tmp_path: Any) -> None:
    gate = tmp_path / "interrupt"
    fns = [lambda: MarkedEnv(str(gate))] * 4
    with RayVecEnv(fns, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS)
        vec.send(np.ones(4, dtype=np.int64))
        gate.touch()
        with pytest.raises(KeyboardInterrupt):
            vec.recv()
        assert not gate.exists()
        result = vec.recv()  # both replies: the one being unpickled and the other
        assert _marks(result) == {0: (1.0, 1), 1: (4.0, 4), 2: (8.0, 8), 3: (12.0, 12)}
        vec.send([1, 1], [3, 1])
        gate.touch()
        with pytest.raises(KeyboardInterrupt):
            vec.recv(batch_size=1)
        assert _marks(vec.recv(batch_size=2)) == {1: (5.0, 5), 3: (13.0, 13)}
        assert vec.step(np.ones(4, dtype=np.int64)).observations[:, 0].tolist() == [2, 6, 9, 14]


def test_ctrl_c_while_recv_joins_the_results_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batches, "join", interrupted_once(_batches.join))
    with RayVecEnv([CounterEnv] * 3, num_workers=1, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS[:3])
        vec.send(np.ones(3, dtype=np.int64))
        with pytest.raises(KeyboardInterrupt):
            vec.recv(batch_size=2)
        first = vec.recv(batch_size=2)
        assert first.env_ids.tolist() == [0, 1] and first.observations[:, 0].tolist() == [1, 4]
        assert vec.recv(batch_size=1).observations[:, 0].tolist() == [8]


@pytest.mark.parametrize(
    ("actions", "env_ids", "rank"), [([1, 200], [1, 2], 2), ([9, 1, 1], [3, 0, 2], 3)]
)
def test_an_invalid_action_in_send_names_its_sub_env_not_its_row(
    actions: list[int], env_ids: list[int], rank: int
) -> None:
    with RayVecEnv([CounterEnv] * 4, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options=STARTS)
        with pytest.raises(sekai.InvalidAction, match=rf"\(sub-env {rank}\)\.$") as caught:
            vec.send(actions, env_ids)
        assert caught.value.index == rank
        vec.send([0] * len(env_ids), env_ids)  # nothing was in flight
        assert sorted(vec.recv(batch_size=len(env_ids)).env_ids.tolist()) == sorted(env_ids)


def test_calls_after_close_with_sends_pending_raise_vec_env_closed() -> None:
    vec = RayVecEnv([CounterEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset()
    vec.send([1], [0])
    vec.close()
    for call in (
        lambda: vec.get_attr("steps"),
        lambda: vec.set_attr("steps", 0),
        lambda: vec.call("steps"),
        lambda: vec.recv(batch_size=1),
        lambda: vec.send([1], [1]),
    ):
        with pytest.raises(sekai.VecEnvClosed):
            call()
    assert not vec._batches.in_flight.any()


class SlowEnv(CounterEnv):
    """A step takes a while, so that an awaited async_step() is still running."""

    def step(self, action: Any) -> Any:
        time.sleep(0.3)
        return super().step(action)


def test_calls_that_step_the_sub_envs_wait_for_an_awaited_async_step() -> None:
    async def overlap() -> list[str]:
        with RayVecEnv([SlowEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU) as vec:
            await vec.async_reset(options=STARTS[:2])
            task = asyncio.ensure_future(vec.async_step([1, 1]))
            await asyncio.sleep(0.05)
            refused = []
            for name, call in (
                ("send", lambda: vec.send([2, 2])),
                ("recv", lambda: vec.recv(batch_size=1)),
                ("step", lambda: vec.step([2, 2])),
                ("reset", lambda: vec.reset()),
            ):
                with pytest.raises(sekai.AsyncCallPending):
                    call()
                refused.append(name)
            result = await task
            assert [info["position"] for info in result.infos] == [1, 4]  # stepped once
            assert not vec._batches.in_flight.any()
            return refused

    assert asyncio.run(overlap()) == ["send", "recv", "step", "reset"]
