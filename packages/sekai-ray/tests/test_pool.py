"""Failures: a sub-env that raises, an actor that dies or hangs, factories and close that fail."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest
import ray

import sekai
from sekai.ray import RayVecEnv, vec_env
from sekai.ray._pool import DIED, ActorPool
from sekai.testing.fixtures import in_thread
from sekai.vector._conformance import CounterEnv

pytestmark = pytest.mark.usefixtures("ray_cluster")
# The envs below are defined here, a module the actors cannot import: send them by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

HALF_CPU = {"CPU": 0.5}


class FragileEnv(CounterEnv):
    """Action 2 raises ValueError; action 1 with ``start`` 13 kills the actor's process."""

    @property
    def pid(self) -> int:
        return os.getpid()

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if options and options.get("start") == 99:
            raise sekai.InvalidAction(99, self.action_space)
        return super().reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        if int(action) == 2:
            raise ValueError("action 2 is not supported")
        if int(action) == 1 and self.position == 13:
            os.kill(os.getpid(), signal.SIGKILL)  # the actor dies in the middle of a step
        return super().step(action)


class HangingEnv(CounterEnv):
    """Its step never returns for action 2 (env code; the actor is killed on timeout)."""

    def step(self, action: Any) -> Any:
        if int(action) == 2:
            threading.Event().wait()
        return super().step(action)


class CloseFailsEnv(CounterEnv):
    def close(self) -> None:
        raise RuntimeError("could not flush the log")


def _fragile(n: int, workers: int, **kwargs: Any) -> RayVecEnv:
    return RayVecEnv([FragileEnv] * n, num_workers=workers, resources_per_worker=HALF_CPU, **kwargs)


def test_sub_env_error_is_raised_with_its_rank_after_the_others_stepped() -> None:
    with _fragile(4, 2) as vec:
        vec.reset(options={"start": 0})
        with pytest.raises(sekai.VecEnvWorkerError) as caught:
            vec.step(np.array([1, 1, 2, 2]))
        error = caught.value
        assert isinstance(error, ValueError)  # VecEnvWorkerError[ValueError]
        assert (error.rank, error.exc_type, error.worker) == (2, "ValueError", 1)
        assert str(error).startswith("Sub-env 2 raised ValueError: action 2 is not supported")
        assert "ValueError: action 2 is not supported" in error.remote_traceback
        assert pickle.loads(pickle.dumps(error)).rank == 2
        # rule 9: the sub-envs that did not fail stepped; the VecEnv is still usable
        assert [int(s) for s in vec.get_attr("steps")] == [1, 1, 0, 0]
        assert vec.step([0, 0, 0, 0]).rewards.tolist() == pytest.approx([-0.2, -0.2, -0.1, -0.1])


def test_reset_error_keeps_the_class_and_requires_a_new_reset() -> None:
    with _fragile(2, 1) as vec:
        with pytest.raises(sekai.InvalidAction) as caught:
            vec.reset(options=[{"start": 0}, {"start": 99}])
        assert isinstance(caught.value, sekai.VecEnvWorkerError)
        assert caught.value.rank == 1
        with pytest.raises(sekai.ResetRequired):
            vec.step([0, 0])
        vec.reset(options={"start": 0})
        assert vec.step([0, 0]).rewards.tolist() == pytest.approx([-0.1, -0.1])


def test_actor_killed_mid_step_names_its_sub_envs_and_close_returns() -> None:
    vec = _fragile(4, 2)
    vec.reset(options=[{"start": 0}, {"start": 13}, {"start": 0}, {"start": 0}])
    pid = vec.get_attr("pid")[0]
    with pytest.raises(sekai.VecEnvWorkerError) as caught:
        vec.step([1, 1, 1, 1])  # sub-env 1 kills worker 0, which also runs sub-env 0
    error = caught.value
    assert str(error) == f"Worker 0 (sub-envs 0-1) raised ActorDiedError: {DIED}"
    assert (error.rank, error.ranks, error.worker, error.remote_traceback) == (0, (0, 1), 0, "")
    assert isinstance(error.__cause__, ray.exceptions.RayActorError)
    # How it ended, as Ray tells it (it does not know the signal), as ProcVecEnv's note does.
    [note] = error.__notes__
    assert note.startswith(
        f"Ray, on the worker actor (pid {pid} on 127.0.0.1): The actor is dead because its "
        "worker process has died."
    )
    with pytest.raises(sekai.VecEnvWorkerError) as again:  # every later call, at once
        vec.get_attr("steps")
    assert str(again.value) == str(error) and again.value.__notes__ == [note]
    vec.close()
    assert vec.closed


def test_actor_killed_between_steps_is_reported_by_its_only_sub_env() -> None:
    with _fragile(2, 2) as vec:
        vec.reset(options={"start": 0})
        os.kill(vec.get_attr("pid")[1], signal.SIGKILL)
        with pytest.raises(sekai.VecEnvWorkerError) as caught:
            vec.step([0, 0])
        assert str(caught.value) == f"Sub-env 1 raised ActorDiedError: {DIED}"
        assert (caught.value.worker, caught.value.ranks) == (1, (1,))
        with pytest.raises(sekai.VecEnvWorkerError) as again:
            vec.step([0, 0])  # at once, before any actor is sent anything
        assert str(again.value) == str(caught.value)
        live = vec._pool.handles[0].actor  # sub-env 0 stepped once, in the first step only
        assert pickle.loads(ray.get(live.get_attr.remote(pickle.dumps((None, "steps")))))[0] == [1]


class _Abort(BaseException):
    """Not an Exception: the actor's methods do not catch it."""


class AbortingEnv(CounterEnv):
    """Action 2 raises ``abort``, a BaseException that is not an Exception."""

    def __init__(self, abort: type[BaseException]) -> None:
        super().__init__()
        self.abort = abort

    def step(self, action: Any) -> Any:
        if int(action) == 2:
            raise self.abort("stop right there")
        return super().step(action)


@pytest.mark.parametrize("abort", [_Abort, KeyboardInterrupt])
def test_a_base_exception_in_a_sub_env_stops_its_actor_as_a_proc_worker_dies(
    abort: type[BaseException],
) -> None:
    fns = [lambda: AbortingEnv(abort)] * 4
    with RayVecEnv(fns, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        vec.reset(options={"start": 0})
        with pytest.raises(sekai.VecEnvWorkerError) as caught:
            vec.step([0, 2, 1, 1])  # sub-env 1 cuts worker 0's step short: sub-env 0 stepped
        error = caught.value
        assert str(error).startswith(f"Worker 0 (sub-envs 0-1) raised {abort.__name__}: stop")
        assert (error.rank, error.worker) == (0, 0)
        assert not isinstance(error, ray.exceptions.RayError)
        # The other actor's step is recorded (rule 9); worker 0 is lost for good, as its
        # sub-envs are out of step with each other.
        assert vec._partial_step(error).stepped.tolist() == [False, False, True, True]
        with pytest.raises(sekai.VecEnvWorkerError) as again:
            vec.step([0, 0, 0, 0])
        assert str(again.value) == str(error)


class _Unsubmittable:
    """An actor handle whose calls Ray refuses to submit."""

    def __getattr__(self, method: str) -> Any:
        return self

    def remote(self, *args: Any) -> Any:
        raise RuntimeError("the object store is full")


def test_a_call_ray_cannot_submit_is_its_actors_error_after_the_others_ran() -> None:
    with _fragile(3, 2) as vec:  # worker 1 runs sub-env 2
        vec.reset(options={"start": 0})
        handle = vec._pool.handles[1]
        actor, handle.actor = handle.actor, _Unsubmittable()
        try:
            with pytest.raises(RuntimeError) as caught:
                vec.step([1, 1, 1])
            vec.send([1, 1], env_ids=[1, 2])
            with pytest.raises(RuntimeError) as received:
                vec.recv(2)
            assert vec.recv(1).env_ids.tolist() == [1]  # kept for the next recv()
        finally:
            handle.actor = actor
        for error in (caught.value, received.value):
            assert isinstance(error, sekai.VecEnvWorkerError)
            assert (error.rank, error.worker) == (2, 1)
            assert "Ray cannot submit step() to worker 1: the object store is full" in str(error)
        assert vec.frozen.tolist() == [False, False, False]
        assert [int(s) for s in vec.get_attr("steps")] == [1, 2, 0]  # the others stepped
        assert vec.step([0, 0, 0]).rewards.tolist() == pytest.approx([-0.2, -0.3, -0.1])


def test_actor_that_does_not_answer_in_time_is_stopped_and_reported() -> None:
    fns = [HangingEnv] * 4
    with RayVecEnv(fns, num_workers=2, resources_per_worker=HALF_CPU, step_timeout=2) as vec:
        vec.reset(options={"start": 0})
        with pytest.raises(TimeoutError) as caught:
            vec.step([0, 0, 2, 0])
        error = caught.value
        assert isinstance(error, sekai.VecEnvWorkerError)
        assert str(error) == (
            "Worker 1 (sub-envs 2-3) raised TimeoutError: worker 1 did not answer step() "
            "within 2 s and was stopped"
        )
        with pytest.raises(TimeoutError):  # it stays dead
            vec.step([0, 0, 0, 0])


class SlowEnv(CounterEnv):
    """Its step takes 1.5 s; with action 2 it then raises ValueError."""

    def step(self, action: Any) -> Any:
        threading.Event().wait(1.5)
        if int(action) == 2:
            raise ValueError("action 2 is not supported")
        return super().step(action)


def _close_during(vec: RayVecEnv, call: Any, after: float = 0.5) -> Any:
    """What ``call()`` in another thread returns or raises when ``vec.close()`` runs ``after``
    seconds into it (a watchdog, a stop button)."""
    calling, got = in_thread(call)
    calling.join(after)
    assert calling.is_alive()
    vec.close()
    calling.join(30)
    assert not calling.is_alive() and vec.closed
    [outcome] = got
    return outcome


def _assert_cut(error: object) -> None:
    """``error`` is what a call gets when close() killed the actors under it: VecEnvClosed, from
    the actors' error."""
    assert type(error) is sekai.VecEnvClosed, error
    assert isinstance(error.__cause__, sekai.VecEnvWorkerError), error.__cause__


def test_close_from_another_thread_stops_a_hanging_step_which_raises_vec_env_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vec_env, "CLOSE_TIMEOUT", 1.0)
    vec = RayVecEnv([HangingEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(options={"start": 0})
    # close() waits CLOSE_TIMEOUT for the actors, then kills them under the step
    error = _close_during(vec, lambda: vec.step([0, 2]), after=1.0)  # sub-env 1 never returns
    _assert_cut(error)  # as a ProcVecEnv call closed under it raises


def test_a_recv_of_another_thread_returns_the_results_that_arrive_within_close_grace() -> None:
    vec = RayVecEnv([SlowEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(options={"start": 0})
    vec.send([1, 1])
    result = _close_during(vec, lambda: vec.recv(2))
    assert isinstance(result, sekai.VecRecvResult), result
    assert sorted(result.env_ids.tolist()) == [0, 1]
    assert result.observations[:, 0].tolist() == [1, 1]


class SlowToPickle:
    """A value that takes a second to pickle (a big object): the call encoding it has not
    reached the actors yet when close() comes."""

    def __reduce__(self) -> Any:
        time.sleep(1.0)
        return (str, ("tagged",))


def test_a_call_of_another_thread_that_has_not_reached_the_actors_finishes_before_close() -> None:
    vec = RayVecEnv([CounterEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(options={"start": 0})
    assert _close_during(vec, lambda: vec.set_attr("tag", SlowToPickle()), after=0.3) is None


def test_a_call_of_another_thread_still_encoding_after_the_grace_raises_vec_env_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vec_env, "CLOSE_TIMEOUT", 0.3)
    vec = RayVecEnv([CounterEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(options={"start": 0})
    error = _close_during(vec, lambda: vec.set_attr("tag", SlowToPickle()), after=0.3)
    _assert_cut(error)  # its actors were killed before it sent


def test_close_from_a_signal_handler_within_a_call_makes_it_raise_vec_env_closed() -> None:
    vec = RayVecEnv([CounterEnv] * 2, num_workers=2, resources_per_worker=HALF_CPU)
    vec.reset(options={"start": 0})
    previous = signal.signal(signal.SIGALRM, lambda *_: vec.close())  # a timeout guard
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(sekai.VecEnvClosed) as raised:  # it had not reached the actors
            vec.set_attr("tag", SlowToPickle())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert vec.closed and isinstance(raised.value.__cause__, sekai.VecEnvWorkerError)
    with pytest.raises(sekai.VecEnvClosed):
        vec.step([0, 0])


@pytest.mark.parametrize(
    ("env", "timeout", "error"),
    [(SlowEnv, None, ValueError), (HangingEnv, 1.0, TimeoutError)],
    ids=["sub-env-error", "step-timeout"],
)
def test_a_call_of_another_thread_that_close_waits_for_raises_its_own_error(
    env: type, timeout: float | None, error: type
) -> None:
    vec = RayVecEnv([env] * 2, num_workers=2, resources_per_worker=HALF_CPU, step_timeout=timeout)
    vec.reset(options={"start": 0})
    raised = _close_during(vec, lambda: vec.step([0, 2]))  # sub-env 1 fails within the grace
    assert isinstance(raised, sekai.VecEnvWorkerError) and isinstance(raised, error), raised
    assert raised.rank == 1


def test_factory_error_on_an_actor_is_raised_after_stopping_every_actor() -> None:
    def broken() -> sekai.Env:  # type: ignore[type-arg]
        raise FileNotFoundError("prices.csv")

    with pytest.raises(FileNotFoundError) as caught:
        RayVecEnv([CounterEnv, CounterEnv, broken], num_workers=2, resources_per_worker=HALF_CPU)
    error = caught.value
    assert isinstance(error, sekai.VecEnvWorkerError)
    assert (error.rank, error.worker, error.exc_type) == (2, 1, "FileNotFoundError")


def test_sub_envs_with_different_spaces_are_rejected() -> None:
    class Wider(CounterEnv):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = sekai.Discrete(4)

    with pytest.raises(ValueError, match="sub-env 1 has action_space Discrete\\(4\\)"):
        RayVecEnv([CounterEnv, Wider], num_workers=2, resources_per_worker=HALF_CPU)


def test_close_raises_a_sub_env_close_error_after_releasing_everything() -> None:
    vec = RayVecEnv([CounterEnv, CloseFailsEnv], num_workers=2, resources_per_worker=HALF_CPU)
    with pytest.raises(RuntimeError, match="could not flush the log") as caught:
        vec.close()
    assert isinstance(caught.value, sekai.VecEnvWorkerError) and caught.value.rank == 1
    assert vec.closed
    assert all(handle.dead is not None for handle in vec._pool.handles)
    vec.close()  # a no-op


def test_arguments_that_cannot_be_pickled_name_their_sub_env_and_send_nothing() -> None:
    pool = ActorPool(ray, [(0, 2), (2, 4)])
    with pytest.raises(TypeError, match="cannot send the action for sub-env 3 to its worker"):
        pool.encode([[0, 1], [2, threading.Lock()]], "the action")


def test_shared_arguments_that_cannot_be_pickled_name_no_sub_env() -> None:
    # (args, kwargs) is two items, like a slice of two sub-envs: it must not be read as one.
    pool = ActorPool(ray, [(0, 2), (2, 4)])
    with pytest.raises(TypeError) as caught:
        pool.encode([((threading.Lock(),), {})] * 2, "the arguments of call('f')", shared=True)
    assert str(caught.value).startswith(
        "RayVecEnv cannot send the arguments of call('f') to the worker actors: it cannot be "
        "pickled (TypeError: "
    )


def test_call_and_reset_name_what_cannot_be_pickled_as_proc_vec_env_does() -> None:
    with RayVecEnv([CounterEnv] * 4, num_workers=2, resources_per_worker=HALF_CPU) as vec:
        with pytest.raises(TypeError, match=r"^RayVecEnv cannot send the arguments of call\('x'"):
            vec.call("x", threading.Lock())
        options = [{}, {}, {}, {"lock": threading.Lock()}]
        with pytest.raises(TypeError, match="cannot send the options for sub-env 3 to its"):
            vec.reset(options=options)


class _OnlyHere:
    """Pickles on the actor's side; unpickling it in the parent raises LookupError."""

    def __reduce__(self) -> Any:
        return (_refuse, ())


def _refuse() -> Any:
    if os.environ.get("SEKAI_TEST_PARENT") == "1":
        raise LookupError("no such class here")
    return _OnlyHere()


def test_a_reply_the_parent_cannot_unpickle_derives_from_its_error_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Holder(CounterEnv):
        thing = _OnlyHere()

    with RayVecEnv([Holder], num_workers=1, resources_per_worker=HALF_CPU) as vec:
        monkeypatch.setenv("SEKAI_TEST_PARENT", "1")  # the actor started without it
        with pytest.raises(LookupError) as caught:
            vec.get_attr("thing")
    assert isinstance(caught.value, sekai.VecEnvWorkerError)  # as ProcVecEnv's
    assert "cannot be unpickled in the parent process" in str(caught.value)


def test_async_step_reports_a_late_actor_and_a_dead_one() -> None:
    fns = [HangingEnv, FragileEnv]
    with RayVecEnv(fns, num_workers=2, resources_per_worker=HALF_CPU, step_timeout=2) as vec:
        vec.reset(options=[{"start": 0}, {"start": 13}])
        with pytest.raises(TimeoutError) as caught:  # sub-env 0 hangs, sub-env 1's actor dies
            asyncio.run(vec.async_step([2, 1]))
        assert (caught.value.rank, caught.value.exc_type) == (0, "TimeoutError")
        assert [str(h.dead).split(":")[0] for h in vec._pool.handles] == [
            "Sub-env 0 raised TimeoutError",
            "Sub-env 1 raised ActorDiedError",
        ]
