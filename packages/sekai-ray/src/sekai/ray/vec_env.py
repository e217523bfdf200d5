"""RayVecEnv: the sub-envs in Ray actors, one round trip per actor and step."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.ray._actor import OWNER, RayWorker
from sekai.ray._cluster import actor_options, check_feasible, connect, default_num_workers
from sekai.ray._pool import ActorPool
from sekai.vector._attributes import Argument, RemoteAttributes, one_call
from sekai.vector._batches import (
    ActionRows,
    Batches,
    finish_step,
    raise_first,
    send_plan,
    step_arguments,
    targeted,
    targeted_values,
)
from sekai.vector._in_process import env_factories
from sekai.vector._remote import Reply, check_slice_spaces, checked_timeout, pickle_factories
from sekai.vector.result import VecRecvResult, VecResetResult, VecStepResult

__all__ = ["RayVecEnv"]

CLOSE_TIMEOUT = 5.0  # seconds close() waits for a call of another thread, then for the actors

_actor_class: Any = None  # ray.remote(RayWorker), made once per process
_actor_class_lock = threading.Lock()


def _remote_worker(ray: Any) -> Any:
    global _actor_class
    with _actor_class_lock:
        if _actor_class is None:
            _actor_class = ray.remote(RayWorker)
        return _actor_class


def _check_num_workers(num_workers: Any, num_envs: int) -> int | None:
    if num_workers is None:
        return None
    if isinstance(num_workers, (bool, np.bool_)) or not isinstance(num_workers, (int, np.integer)):
        raise TypeError(f"num_workers must be an int or None, got {type(num_workers).__name__}.")
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}.")
    return min(int(num_workers), num_envs)  # more actors than sub-envs would idle


def _slices(num_envs: int, num_workers: int) -> list[tuple[int, int]]:
    """Contiguous, even slices: the first ``num_envs % num_workers`` get one more sub-env."""
    size, extra = divmod(num_envs, num_workers)
    bounds = [0]
    for index in range(num_workers):
        bounds.append(bounds[-1] + size + (index < extra))
    return list(itertools.pairwise(bounds))


def _raise_first(outcomes: list[Reply]) -> None:
    """Raise the error of the lowest sub-env, if any (rule 9: after every actor answered)."""
    raise_first(error for outcome in outcomes for error in outcome.errors)


class RayVecEnv(RemoteAttributes):
    """Runs the sub-envs in Ray actors, each actor holding a slice of them.

    ``step()`` sends one request per actor and waits for all of them, so a step costs one round
    trip per actor, whatever the number of sub-envs it holds; infos are split into one dict per
    sub-env only when read. The contract is every backend's
    (core.md §14): seeding, actions and batching are checked and built here, autoreset and
    freezing run next to each sub-env (the code SyncVecEnv runs).

    Args:
        env_fns: zero-argument callables, one per sub-env, that build the sub-envs. They are
            sent to the actors with Ray's cloudpickle, so lambdas and classes of your script
            work; modules they import must be installed on the cluster's nodes.
        autoreset: reset a finished sub-env within the same ``step()`` (default); with False a
            finished sub-env is frozen until the next ``reset()``.
        num_workers: the number of actors (at most ``num_envs``); the sub-envs are split evenly
            between them. None: one per sub-env, but no more than the cluster's free CPUs
            can hold (at least one).
        address: the Ray cluster to connect to (``"auto"``, ``"host:port"``, ``"ray://..."``)
            when this process is not connected to Ray yet. None starts a local cluster with the
            dashboard off, listening on 127.0.0.1 only. An existing connection is always used.
        resources_per_worker: the Ray resources each actor reserves, by Ray's resource names:
            ``{"CPU": 1}`` by default; e.g. ``{"CPU": 2, "GPU": 0.25, "memory": 2**30}`` or a
            custom resource of your cluster.
        step_timeout: seconds to wait for the actors in ``step()`` and ``recv()`` (None or
            ``inf``: no limit). An actor that does not answer in time is killed and reported as
            a ``VecEnvWorkerError`` that is also a ``TimeoutError`` (``exc_type``
            ``"TimeoutError"``).
        reset_timeout: the same for ``reset()`` and for building the sub-envs (which includes
            waiting for Ray to schedule the actors).
        batch_size: how many results ``recv()`` returns by default (None: ``num_envs``).

    Like ``ProcVecEnv``, it steps asynchronously too: ``send(actions, env_ids)`` starts the
    steps of some sub-envs and returns at once, ``recv()`` returns the first ``batch_size``
    results (a ``VecRecvResult`` with their ``env_ids``). Each actor replies once per command
    for all the sub-envs it stepped, with rewards, flags and infos stacked.

    Raises:
        TypeError: arguments of the wrong type, or factories that cannot be pickled.
        ValueError: bad argument values, sub-envs with different spaces, or actors that a local
            cluster started here cannot hold.
        VecEnvWorkerError: an env factory raised on its actor, or an actor died or did not
            answer within ``reset_timeout`` (the actors are stopped first).
        sekai.MissingDependency: Ray is not installed; the same error, with the command that
            installs it, as ``make_vec(..., vectorization_mode="ray")``.

    Example:
        >>> vec = RayVecEnv([lambda: sekai.make("CartPole-v1")] * 8, num_workers=2)
        >>> vec, vec.num_workers
        (RayVecEnv(num_envs=8), 2)
    """

    _workers = "Ray actors"
    _calls_take_turns = True  # the actors run one command at a time

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Env[Any, Any]]],
        *,
        autoreset: bool = True,
        num_workers: int | None = None,
        address: str | None = None,
        resources_per_worker: Mapping[str, float] | None = None,
        step_timeout: float | None = None,
        reset_timeout: float | None = None,
        batch_size: int | None = None,
    ) -> None:
        fns = env_factories(env_fns, OWNER)
        if not isinstance(autoreset, (bool, np.bool_)):
            raise TypeError(f"autoreset must be a bool, got {type(autoreset).__name__}.")
        workers = _check_num_workers(num_workers, len(fns))
        self._calling = threading.RLock()  # held by each call that uses the actors (one_call)
        self._batches = Batches(OWNER, len(fns), batch_size)
        self._step_timeout = checked_timeout("step_timeout", step_timeout)
        self._reset_timeout = checked_timeout("reset_timeout", reset_timeout)
        options = actor_options(resources_per_worker)
        ray = connect(address)
        _register_exit_hook()  # after ray.init(): runs before Ray's own exit handler
        if workers is None:
            workers = default_num_workers(ray, len(fns), options)
        check_feasible(ray, options, workers)
        pool = ActorPool(ray, _slices(len(fns), workers))
        to = "a worker actor"
        factories = [
            pickle_factories(ray.cloudpickle, fns, lo, hi, OWNER, to) for lo, hi in pool.slices
        ]
        try:
            pool.start(_remote_worker(ray), options)
            refs = [
                h.actor.init.remote(payload, bool(autoreset), h.lo)
                for h, payload in zip(pool.handles, factories)
            ]
            outcomes = pool.collect(refs, self._reset_timeout, "init")
            _raise_first(outcomes)
            ready = [outcome.entries for outcome in outcomes]
            spaces = check_slice_spaces(OWNER, [(h.lo, r) for h, r in zip(pool.handles, ready)])
            super().__init__(len(fns), *spaces, autoreset=bool(autoreset))
        except BaseException:
            pool.stop(CLOSE_TIMEOUT)
            raise
        self._pool = pool
        self._set_self_resetting([flag for entries in ready for flag in entries[2]])
        self.metadata = ready[0][1]
        _LIVE.add(self)

    @property
    def num_workers(self) -> int:
        """The number of worker actors."""
        return len(self._pool.handles)

    # -- reset and step ----------------------------------------------------------------------

    def _ready(self) -> ActorPool:
        """VecEnvClosed, or the error of an actor known to be dead: before the parent's own
        checks, so that a dead actor is what every later call reports (as with ProcVecEnv)."""
        self._check_open()
        self._pool.raise_if_dead()
        return self._pool

    def _reset_payloads(self, seed: Any, options: Any) -> list[bytes]:
        self._ready()
        # Options that cannot be sent are refused before anything changes: no seed drawn from
        # a Generator, no result of send() dropped.
        seeds, per_env_options = self._reset_plan(seed, options, self._check_options)
        payloads = self._reset_encoded(seeds, per_env_options)
        self._pool.forget_posted()  # the sub-envs start over: results of send() do not matter
        self._batches.forget()
        return payloads

    def _reset_encoded(
        self, seeds: Sequence[int | None], options: Sequence[dict[str, Any] | None]
    ) -> list[bytes]:
        """Each actor's pickled reset argument: its sub-envs' (seed, options) pairs."""
        plans = list(zip(seeds, options))
        return self._pool.encode([plans[lo:hi] for lo, hi in self._pool.slices], "the options")

    def _check_options(self, options: list[dict[str, Any] | None]) -> None:
        """TypeError where reset()'s ``options`` cannot be pickled (``_reset_plan``'s check,
        before any seed is drawn; the seeds are ints or None, which always can)."""
        if any(option is not None for option in options):
            self._reset_encoded([None] * len(options), options)

    def _reset_from(self, outcomes: list[Reply]) -> VecResetResult[Any]:
        _raise_first(outcomes)
        entries = [entry for outcome in outcomes for entry in outcome.entries]
        observations = self._stack([entry[0] for entry in entries])
        self._reset_done()
        return VecResetResult(observations, [entry[1] for entry in entries])

    def _step_payloads(self, actions: Any) -> list[bytes]:
        self._ready()
        self._batches.check_idle("step")
        batch = self._checked_actions(actions)
        arguments = step_arguments(self.action_space, batch, self._pool.slices)
        per_env = ActionRows(self._action_checker(), batch)
        return self._pool.encode(arguments, "the action", per_env)

    def _step_from(
        self, outcomes: list[Reply], interrupt: BaseException | None = None
    ) -> VecStepResult[Any]:
        return finish_step(self, self._pool.slices, outcomes, None, interrupt)

    @one_call
    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._check_no_async_call()
        payloads = self._reset_payloads(seed, options)
        refs = self._pool.send("reset", payloads)
        return self._reset_from(self._pool.collect(refs, self._reset_timeout, "reset"))

    @one_call
    def step(self, actions: Any) -> VecStepResult[Any]:
        self._check_no_async_call()
        refs = self._pool.send("step", self._step_payloads(actions))
        return self._step_from(self._pool.collect(refs, self._step_timeout, "step"))

    async def async_reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        """``reset()`` awaiting the actors' replies (the event loop runs meanwhile)."""
        self._check_open()
        self._begin_async()
        try:
            refs = self._pool.send("reset", self._reset_payloads(seed, options))
            outcomes = await self._pool.collect_async(refs, self._reset_timeout, "reset")
            return self._reset_from(outcomes)
        finally:
            self._end_async()

    async def async_step(self, actions: Any) -> VecStepResult[Any]:
        """``step()`` awaiting the actors' replies (the event loop runs meanwhile).

        Cancelled (``asyncio.wait_for`` timing out, Ctrl-C), it still awaits the actors, which
        step all the same, and records the sub-envs that stepped as for a step that raised
        (rule 9: the frozen mask and the wrappers' episode bookkeeping stay true to them)
        before the cancellation propagates.
        """
        self._check_open()
        self._begin_async()
        try:
            pool = self._pool
            refs = pool.send("step", self._step_payloads(actions))
            interrupt: BaseException | None = None
            try:
                outcomes = await pool.collect_async(refs, self._step_timeout, "step")
            except asyncio.CancelledError as error:
                interrupt = error
                outcomes = await pool.collect_anyway(refs, self._step_timeout, "step")
            return self._step_from(outcomes, interrupt)
        finally:
            self._end_async()

    # -- send / recv -------------------------------------------------------------------------

    @one_call
    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start stepping the sub-envs ``env_ids`` with ``actions`` and return at once.

        ``recv()`` returns their results as they finish. Autoreset and freezing work per
        sub-env as in ``step()``.

        Args:
            actions: a batch of ``len(env_ids)`` actions, row ``i`` for sub-env ``env_ids[i]``.
            env_ids: the sub-envs to step (None: every sub-env); none of them may be in flight
                already.

        Raises:
            ValueError: bad ``env_ids`` (out of range, repeated, already in flight, or
                failed in a step whose error ``recv()`` has not raised yet), or a batch of
                the wrong structure.
            sekai.InvalidAction: an invalid action (its ``index`` is the sub-env,
                ``env_ids[row]``, as for ``step()``).
            sekai.ResetRequired: before the first ``reset()``.
            sekai.AsyncCallPending: an ``async_reset()``/``async_step()`` is being awaited.
        """
        self._check_no_async_call()
        pool = self._ready()
        ids = self._batches.env_ids(env_ids)
        checker, batch = self._checked_subset(actions, ids)
        plan = send_plan(self.action_space, batch, ids, pool.slices)
        handles = [pool.handles[worker] for worker, _, _ in plan]
        rows = ActionRows(checker, batch, ids)
        payloads = pool.encode([argument for _, argument, _ in plan], "the action", rows, handles)
        posts = [(h, p, tag) for h, p, (_, _, tag) in zip(handles, payloads, plan)]
        self._batches.post(lambda posted: pool.post("step", posts, posted))

    @one_call
    def recv(self, batch_size: int | None = None) -> VecRecvResult[Any]:
        """The results of the first ``batch_size`` sub-envs whose ``send()`` steps finished.

        Args:
            batch_size: how many (None: the ``batch_size`` given to the constructor).

        Returns:
            A ``VecRecvResult`` whose rows are the sub-envs ``env_ids``, in the order their
            results arrived.

        Raises:
            RuntimeError: fewer sub-envs in flight than ``batch_size``.
            VecEnvWorkerError: a sub-env raised in its step (its actor's other results stay
                for the next ``recv()``), or an actor died or timed out (then every later call
                raises it, as after ``step()``).
            sekai.AsyncCallPending: an ``async_reset()``/``async_step()`` is being awaited.
        """
        self._check_no_async_call()
        pool = self._ready()
        return self._batches.receive(self, batch_size, pool, self._step_timeout, None)

    # -- attributes --------------------------------------------------------------------------

    @one_call
    def _at(
        self,
        command: str,
        env_ids: Sequence[int] | None,
        argument: Argument,
        what: str,
        values: list[Any] | None = None,
    ) -> list[Any]:
        # No timeout: a method called by name may legitimately take long (e.g. saving data).
        pool = self._ready()
        self._batches.check_idle(command)
        ids = None if env_ids is None else self._env_id_list(env_ids)
        workers, arguments, per_env = targeted(ids, pool.slices, argument, values)
        handles = pool.handles if workers is None else [pool.handles[w] for w in workers]
        # call's arguments are the same for every sub-env: a failure names none of them.
        payloads = pool.encode(arguments, what, per_env, handles, shared=command == "call")
        outcomes = pool.collect(pool.send(command, payloads, handles), None, command, handles)
        return targeted_values(ids, pool.slices, workers, outcomes)

    # -- closing -----------------------------------------------------------------------------

    def _close(self) -> None:
        # A call of another thread (close() from a watchdog or a stop button) may not have
        # reached every actor yet: it is waited for, up to CLOSE_TIMEOUT, then has its actors
        # killed under it (_cut: it raises VecEnvClosed). close() within the call (a signal
        # handler) cannot wait for it: each actor closes its sub-envs after the call's
        # commands, and the call, which finds them gone, forgets what was in flight as it
        # unwinds.
        _LIVE.discard(self)
        if self._calling._is_owned():  # type: ignore[attr-defined]
            self._cut = True
            self._deferred = True
            errors = self._pool.stop(CLOSE_TIMEOUT)
        else:
            self._wait_for_call(CLOSE_TIMEOUT)
            try:
                errors = self._pool.stop(CLOSE_TIMEOUT)
            finally:
                self._release_deferred()
                self._calling.release()
        if errors:
            raise min(errors, key=lambda item: item[0])[1]

    def _cut_short(self) -> None:
        self._cut = True
        self._pool.kill()

    def _release_deferred(self) -> None:
        self._batches.forget()  # what was in flight is gone with the actors
        self._pool.forget_posted()

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None and not getattr(self, "_closed", True):
            with contextlib.suppress(Exception):
                self.close()


# Close what is still open at exit, before Ray's own exit handler shuts the cluster down and
# with it the actors, without the sub-envs' close() (atexit runs the last registered first).
_LIVE: weakref.WeakSet[RayVecEnv] = weakref.WeakSet()
_exit_hook_registered = False


def _register_exit_hook() -> None:
    global _exit_hook_registered
    if not _exit_hook_registered:
        atexit.register(_close_all)
        _exit_hook_registered = True


def _close_all() -> None:
    for vec in list(_LIVE):
        with contextlib.suppress(Exception):
            vec.close()
