"""The worker actor's body, driven in this process (no Ray): replies, errors by sub-env."""

from __future__ import annotations

import pickle
import threading
from typing import Any

import cloudpickle
import numpy as np
import pytest

import sekai
from sekai.ray._actor import CutShort, RayWorker
from sekai.vector._conformance import GOAL, CounterEnv
from sekai.vector._contract.errors import ErrorInfo, worker_error
from sekai.vector._packing import received, unpack
from sekai.vector._remote import encode_slices, pickle_factories


class BadResetEnv(CounterEnv):
    """Raises in reset() when asked to start at 13."""

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if options and options.get("start") == 13:
            raise sekai.ResetRequired("thirteen is unlucky")
        return super().reset(seed=seed, options=options)


class LockedInfoEnv(CounterEnv):
    """Its step info holds a lock, which cannot be pickled."""

    def step(self, action: Any) -> Any:
        result = super().step(action)
        return sekai.StepResult(
            result.observation, result.reward, False, False, {"lock": threading.Lock()}
        )


def _reply(body: bytes) -> tuple[Any, list[tuple[int, ErrorInfo]]]:
    entries, errors = pickle.loads(body)
    return entries, [(index, ErrorInfo(*info)) for index, info in errors or ()]


def _factories(*fns: Any) -> bytes:
    return pickle_factories(cloudpickle, fns, 0, len(fns), "RayVecEnv", "a worker actor")


def _worker(*fns: Any, autoreset: bool = True, first: int = 0) -> RayWorker:
    worker = RayWorker()
    _entries, errors = _reply(worker.init(_factories(*fns), autoreset, first))
    assert errors == []
    return worker


def test_init_reports_spaces_metadata_and_autoreset_wrappers() -> None:
    worker = RayWorker()
    fns = [CounterEnv, lambda: sekai.wrappers.AutoReset(CounterEnv())]
    entries, errors = _reply(worker.init(_factories(*fns), True, 4))
    assert errors == []
    spaces, metadata, resets = entries
    # Only the slice's first spaces (both sub-envs have them), which the parent compares.
    [(offset, (observation_space, action_space))] = spaces
    assert offset == 0
    assert observation_space == CounterEnv().observation_space
    assert action_space == sekai.Discrete(3)
    assert metadata == CounterEnv.metadata
    assert resets == [False, True]


def test_init_names_the_factory_that_raised_by_its_local_index() -> None:
    def broken() -> sekai.Env:  # type: ignore[type-arg]
        raise OSError("no data file")

    entries, errors = _reply(RayWorker().init(_factories(CounterEnv, broken), True, 6))
    assert entries is None
    [(index, info)] = errors
    assert (index, info.exc_type, info.message) == (1, "OSError", "no data file")
    assert worker_error(info, 7).rank == 7


def test_init_rejects_a_factory_that_returns_no_env_naming_ray_vec_env() -> None:
    _entries, errors = _reply(RayWorker().init(_factories(lambda: 3), True, 0))
    [(_index, info)] = errors
    assert info.exc_type == "TypeError"
    assert info.message.startswith("RayVecEnv: env_fns[0]() returned int, not a sekai.Env")


def test_init_reports_factories_that_cannot_be_unpickled() -> None:
    entries, errors = _reply(RayWorker().init(b"not a pickle", True, 0))
    assert entries is None
    assert errors[0][1].message.startswith("the env factories cannot be unpickled")


def _module_missing() -> Any:
    raise ModuleNotFoundError("No module named 'simulators'")


class _NeedsAModule:
    """A factory whose unpickling fails, as one whose module is missing on the actor's node."""

    def __call__(self) -> CounterEnv:
        return CounterEnv()

    def __reduce__(self) -> Any:
        return (_module_missing, ())


class _Unreadable:
    """Pickles fine; unpickling it fails, as for a class the actor's node lacks."""

    def __reduce__(self) -> Any:
        return (_module_missing, ())


def test_init_names_the_factory_that_cannot_be_unpickled() -> None:
    entries, errors = _reply(RayWorker().init(_factories(CounterEnv, _NeedsAModule()), True, 6))
    assert entries is None
    [(index, info)] = errors
    assert (index, info.exc_type) == (1, "ModuleNotFoundError")
    assert info.message == "the env factory cannot be unpickled: No module named 'simulators'"
    assert worker_error(info, 6 + index).rank == 7


def test_factories_of_a_slice_share_what_they_capture_once() -> None:
    data = np.zeros(10**5)  # 800 kB, captured by both factories
    payload = _factories(lambda: (data, CounterEnv())[1], lambda: (data.sum(), CounterEnv())[1])
    assert data.nbytes < len(payload) < 1.5 * data.nbytes


def test_reset_and_step_run_every_sub_env_and_report_each_failure() -> None:
    worker = _worker(BadResetEnv, BadResetEnv, BadResetEnv)
    plans = [(None, {"start": 13}), (None, {"start": 2}), (None, {"start": 13})]
    entries, errors = _reply(worker.reset(pickle.dumps(plans)))
    assert [index for index, _ in errors] == [0, 2]
    assert errors[0][1].exc_type == "ResetRequired"
    assert entries[0] is None and entries[2] is None
    observation, info = entries[1]
    assert observation.tolist() == [2.0, 0.0, 1.0] and info == {"start": 2}
    assert isinstance(worker_error(errors[0][1], 0), sekai.ResetRequired)


def _actions(*actions: int, positions: list[int] | None = None) -> bytes:
    """A step payload: the positions (None: all) and the encoded batch of Discrete actions."""
    encoded = encode_slices(sekai.Discrete(3), np.array(actions), [(0, len(actions))])[0]
    return pickle.dumps((positions, encoded))


def _step(entries: Any) -> tuple[list[Any], Any, Any, Any, list[Any]]:
    """The rows of a step reply: infos, rewards, terminated, truncated, observations."""
    infos, (rewards, terminated, truncated, observations) = entries
    return unpack(received(infos)), rewards, terminated, truncated, unpack(observations)


def test_step_entries_follow_the_autoreset_contract() -> None:
    worker = _worker(CounterEnv)
    _reply(worker.reset(pickle.dumps([(None, {"start": GOAL - 1})])))
    entries, errors = _reply(worker.step(_actions(2)))
    assert errors == []
    [info], _rewards, terminated, truncated, [observation] = _step(entries)
    assert (terminated.tolist(), truncated.tolist()) == ([True], [False])
    assert info["final_observation"].tolist() == [GOAL + 1, 1, 1]
    assert observation.tolist() == [3.0, 0.0, 2.0]  # the next episode's first observation


def test_step_of_some_sub_envs_replies_their_rows_stacked_in_order() -> None:
    worker = _worker(CounterEnv, CounterEnv, CounterEnv, first=4)
    _reply(worker.reset(pickle.dumps([(None, {"start": s}) for s in (1, 5, 3)])))
    entries, errors = _reply(worker.step(_actions(2, 0, positions=[2, 0])))
    assert errors == []
    _infos, rewards, terminated, _truncated, observations = _step(entries)
    assert rewards.dtype == np.float64 and terminated.dtype == np.bool_
    assert [obs[0] for obs in observations] == [5.0, 1.0]  # sub-env 2 moved, 0 stood still
    assert _reply(worker.get_attr(pickle.dumps((None, "position"))))[0] == [1, 5, 5]


def test_unpicklable_step_result_names_its_sub_env() -> None:
    worker = _worker(CounterEnv, LockedInfoEnv)
    _reply(worker.reset(pickle.dumps([(None, None)] * 2)))
    entries, errors = _reply(worker.step(_actions(1, 1)))
    infos, *_ = _step(entries)
    assert infos[0] is not None and infos[1] is None
    [(index, info)] = errors
    assert index == 1
    assert info.exc_type == "TypeError"
    assert info.message.startswith("the result of step() cannot be sent")


def test_attributes_and_calls_go_through_each_sub_env() -> None:
    worker = _worker(CounterEnv, CounterEnv, first=2)
    _reply(worker.reset(pickle.dumps([(None, {"start": 1}), (None, {"start": 5})])))
    assert _reply(worker.get_attr(pickle.dumps((None, "position")))) == ([1, 5], [])
    assert _reply(worker.set_attr(pickle.dumps((None, "position", [7, 8], True)))) == (None, [])
    entries, _ = _reply(worker.call(pickle.dumps((None, "_obs", (), {}))))
    assert [obs[0] for obs in entries] == [7.0, 8.0]
    entries, errors = _reply(worker.get_attr(pickle.dumps((None, "missing"))))
    assert [(index, info.exc_type) for index, info in errors] == [
        (0, "AttributeError"),
        (1, "AttributeError"),
    ]


def test_attributes_and_calls_of_some_positions_leave_the_others_alone() -> None:
    class Picky(CounterEnv):
        def poke(self, value: int) -> int:
            if value < 0:
                raise ValueError("negative")
            self.position += value
            return self.position

    worker = _worker(Picky, Picky, Picky, first=3)
    _reply(worker.reset(pickle.dumps([(None, {"start": s}) for s in (1, 2, 3)])))
    assert _reply(worker.set_attr(pickle.dumps(([2, 0], "position", [9, 8], True)))) == (None, [])
    # One entry per sub-env of the slice, None for those not asked.
    assert _reply(worker.get_attr(pickle.dumps(([2], "position")))) == ([None, None, 9], [])
    assert _reply(worker.call(pickle.dumps(([1], "poke", (), {"value": 4})))) == (
        [None, 6, None],
        [],
    )
    assert _reply(worker.get_attr(pickle.dumps((None, "position"))))[0] == [8, 6, 9]
    entries, errors = _reply(worker.call(pickle.dumps(([2, 1], "poke", (-1,), {}))))
    assert entries == [None, None, None]
    # Each failure names its position in the slice (the parent adds the slice's first).
    assert sorted((index, info.exc_type) for index, info in errors) == [
        (1, "ValueError"),
        (2, "ValueError"),
    ]


def test_a_command_that_cannot_be_unpickled_fails_the_sub_envs_it_was_for() -> None:
    worker = _worker(CounterEnv, CounterEnv)
    entries, errors = _reply(worker.step(b"garbage"))  # no positions to read: all of them
    assert entries is None
    assert [index for index, _ in errors] == [0, 1]
    assert errors[0][1].message.startswith("the command step() cannot be unpickled in the worker")
    _entries, errors = _reply(worker.call(pickle.dumps(([1], "reset", (_Unreadable(),), {}))))
    assert [(index, info.exc_type) for index, info in errors] == [(1, "ModuleNotFoundError")]


def test_a_base_exception_escapes_as_cut_short_with_its_class_name() -> None:
    class Interrupted(CounterEnv):
        def step(self, action: Any) -> Any:
            raise KeyboardInterrupt("Ctrl-C in env code")

    worker = _worker(CounterEnv, Interrupted)
    worker.reset(pickle.dumps([(None, None)] * 2))
    with pytest.raises(CutShort) as caught:  # the parent then stops the actor
        worker.step(_actions(0, 0))
    assert (caught.value.exc_type, caught.value.message) == (
        "KeyboardInterrupt",
        "Ctrl-C in env code",
    )
    assert isinstance(pickle.loads(pickle.dumps(caught.value)), CutShort)


def test_close_closes_every_sub_env_and_reports_failures() -> None:
    class CloseFails(CounterEnv):
        def close(self) -> None:
            raise RuntimeError("disk full")

    worker = _worker(CloseFails, CounterEnv)
    _entries, errors = _reply(worker.close())
    assert [(index, info.message) for index, info in errors] == [(0, "disk full")]
    assert worker.subs == []


def test_system_exit_escapes_as_itself_so_that_ray_can_end_the_actor() -> None:
    class Exits(CounterEnv):
        def step(self, action: Any) -> Any:
            raise SystemExit(3)  # what ray.actor.exit_actor() raises

    worker = _worker(Exits)
    worker.reset(pickle.dumps([(None, None)]))
    with pytest.raises(SystemExit):
        worker.step(_actions(0))


def test_reset_options_that_cannot_be_unpickled_fail_every_sub_env_of_the_slice() -> None:
    # A reset's argument is one (seed, options) pair per sub-env: it names no positions.
    worker = _worker(CounterEnv, CounterEnv)
    payload = pickle.dumps([(None, None), (None, {"x": _Unreadable()})])
    entries, errors = _reply(worker.reset(payload))
    assert entries is None
    assert [(index, info.exc_type) for index, info in errors] == [
        (0, "ModuleNotFoundError"),
        (1, "ModuleNotFoundError"),
    ]


def test_a_command_that_cannot_start_fails_the_first_sub_env_of_the_slice() -> None:
    worker = _worker(CounterEnv, CounterEnv)
    entries, errors = _reply(worker.step(pickle.dumps(42)))  # not (positions, actions)
    assert entries is None
    assert [(index, info.exc_type) for index, info in errors] == [(0, "TypeError")]
