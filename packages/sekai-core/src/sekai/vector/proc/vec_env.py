"""ProcVecEnv: runs the sub-envs in worker processes, observations through shared memory."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import multiprocessing
import multiprocessing.util  # its exit handler must be registered before ours
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from sekai.core.env import Env
from sekai.error import VecEnvWorkerError
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
from sekai.vector._contract.batching import copy_batch
from sekai.vector._contract.errors import noted
from sekai.vector._in_process import env_factories
from sekai.vector._remote import (
    Items,
    Reply,
    check_slice_spaces,
    checked_timeout,
    pickle_factories,
)
from sekai.vector.proc import processes, protocol
from sekai.vector.proc.handle import DIED
from sekai.vector.proc.pool import Pool
from sekai.vector.proc.shm import NoRoom, SharedBatch, is_fixed_size, warn_no_room
from sekai.vector.result import VecRecvResult, VecResetResult, VecStepResult

__all__ = ["ProcVecEnv"]

OWNER = "ProcVecEnv"

_UNGUARDED = (
    "ProcVecEnv was created while a worker process was importing your main module: with the "
    "{method} start method every worker re-imports it. Put the code that creates the "
    'ProcVecEnv (or calls make_vec(..., vectorization_mode="proc")) under '
    'if __name__ == "__main__":, or pass context="fork" on Linux.'
)
_NOT_STARTED = "{died} while starting; if the worker printed an error, it is above"
_REIMPORTED = (
    ". With the {method} start method every worker re-imports your main module: if your script "
    'creates the ProcVecEnv at import time, put that code under if __name__ == "__main__":'
)
_FORKED = (
    "This ProcVecEnv belongs to process {owner}, which started its worker processes; this "
    "process ({pid}) was forked from it (os.fork) and cannot use them: they keep serving the "
    "ProcVecEnv of process {owner}. Build a new ProcVecEnv in this process instead, with "
    'context="spawn" (or "fork"): a forkserver (the default start method) started by '
    "process {owner} cannot start workers for this one."
)
_NOT_FIXED = (
    "shared_memory=True needs an observation space whose parts all have a fixed size (Box, "
    "Discrete, MultiDiscrete, MultiBinary, or Dict, Tuple or MaskedBox of them), got {space!r}. "
    "Pass shared_memory=None to pickle the observations of other spaces."
)


def _default_context() -> str:
    return "spawn" if sys.platform == "win32" else "forkserver"


def _context(context: Any) -> str:
    if context is None:
        return _default_context()
    methods = multiprocessing.get_all_start_methods()
    if not isinstance(context, str):
        raise TypeError(f"context must be a start method name {methods} or None, got {context!r}.")
    if context not in methods:
        raise ValueError(f"context must be one of {methods} on this platform, got {context!r}.")
    return context


def _num_workers(value: Any, num_envs: int) -> int:
    if value is None:  # the documented default: one per sub-env
        return num_envs
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"num_workers must be an int or None, got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"num_workers must be >= 1, got {value}.")
    return min(int(value), num_envs)  # more workers than sub-envs would idle


def _slices(num_envs: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous, even slices of the sub-envs (the first ``num_envs % workers`` get one more)."""
    size, extra = divmod(num_envs, workers)
    bounds = [0]
    for index in range(workers):
        bounds.append(bounds[-1] + size + (index < extra))
    return list(itertools.pairwise(bounds))


class ProcVecEnv(RemoteAttributes):
    """Runs the sub-envs in worker processes, in parallel.

    Each worker runs an even slice of the sub-envs (one each by default) and talks to the
    parent over its own pipe. Observations of fixed-size spaces are written by the workers
    straight into one shared-memory block; others are pickled. Sub-env exceptions are raised as
    ``VecEnvWorkerError[Cls]`` (a subclass of both ``VecEnvWorkerError`` and the original
    class, so ``except ValueError`` still works), after every other sub-env finished the call.
    A worker that died raises a plain ``VecEnvWorkerError`` (``exc_type`` ``"EOFError"``) in
    that call and every later one; one that timed out, a ``VecEnvWorkerError[TimeoutError]``.
    The parent's own checks (ResetRequired, InvalidAction, TypeError for a command that cannot
    be pickled) raise directly, before anything is sent. Replies left unread by an interrupted
    call (Ctrl-C) are dropped, so the VecEnv stays usable; those of ``send()`` are kept until
    ``recv()`` returned them, so Ctrl-C during ``send()`` or ``recv()`` loses nothing but a
    result ``recv()`` was already returning. The workers belong to
    the process that built it: in a child forked from it (os.fork) every call raises
    RuntimeError, and the child's exit leaves them running.

    Args:
        env_fns: zero-argument callables, one per sub-env, that build the sub-envs (sent with
            cloudpickle, so lambdas and classes defined in a script work).
        autoreset: reset a finished sub-env within the same step (default); with False a
            finished sub-env is frozen until the next reset.
        context: the ``multiprocessing`` start method; None: ``"forkserver"`` (``"spawn"`` on
            Windows). With either, guard your script with ``if __name__ == "__main__":``.
        close_timeout: seconds ``close()`` waits for the workers before terminating them (then
            killing those that ignore it); ``inf``: no limit. Ctrl-C cuts the wait to half a
            second. From another thread, ``close()`` first waits as long for a call in
            progress (one runs at a time), then kills the workers under it: it raises
            ``VecEnvClosed``. Ctrl-C during that wait, or a ``close()`` from a signal handler
            inside the call, kills them at once.
        num_workers: worker processes (None: one per sub-env; at most ``num_envs``). With
            more sub-envs than cores, about the number of cores is best.
        shared_memory: None: use shared memory when the observation space allows it and
            /dev/shm has room for it (else pickle, with a ``SharedMemoryWarning``); True:
            require it (TypeError for other spaces, OSError where it does not fit); False:
            always pickle observations.
        step_timeout: seconds to wait for the workers in ``step()`` and ``recv()``, and in
            ``send()`` for a worker to read actions too long for its pipe (None or ``inf``: no
            limit); a worker that does not answer in time raises ``VecEnvWorkerError``
            (``exc_type`` ``"TimeoutError"``) and is stopped.
        reset_timeout: the same for ``reset()`` (building the sub-envs has no limit: Ctrl-C
            ends a factory that hangs, after half a second as in ``close()``).
        batch_size: how many results ``recv()`` returns by default (None: ``num_envs``).

    Besides ``step()``, sub-envs can be stepped asynchronously: ``send(actions, env_ids)``
    starts their steps and returns at once, ``recv()`` returns the results of the first
    ``batch_size`` sub-envs to finish (a ``VecRecvResult`` with their ``env_ids``).

    Example:
        >>> if __name__ == "__main__":  # needed with forkserver and spawn
        ...     fns = [lambda: sekai.make("CartPole-v1")] * 8
        ...     with sekai.ProcVecEnv(fns, num_workers=2) as vec:
        ...         print(vec.reset(seed=0).observations.shape, vec.shared_memory)
        (8, 4) True
    """

    _forked = False  # this copy is in a child forked from the owner (``_disown``)
    _calls_take_turns = True  # under the call lock, also another thread's during an async call

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Env[Any, Any]]],
        *,
        autoreset: bool = True,
        context: str | None = None,
        close_timeout: float = 5.0,
        num_workers: int | None = None,
        shared_memory: bool | None = None,
        step_timeout: float | None = None,
        reset_timeout: float | None = None,
        batch_size: int | None = None,
    ) -> None:
        self._pool: Pool | None = None
        self._shared: SharedBatch | None = None
        self._calling = threading.RLock()  # held by each call that uses the workers (one_call)
        self._context = _context(context)
        if getattr(multiprocessing.process.current_process(), "_inheriting", False):
            raise RuntimeError(_UNGUARDED.format(method=self._context))
        fns = env_factories(env_fns, OWNER)
        if not isinstance(autoreset, (bool, np.bool_)):
            raise TypeError(f"autoreset must be a bool, got {type(autoreset).__name__}.")
        if shared_memory is not None and not isinstance(shared_memory, (bool, np.bool_)):
            raise TypeError(f"shared_memory must be None or a bool, got {shared_memory!r}.")
        self._close_timeout = checked_timeout("close_timeout", close_timeout, optional=False)
        self._step_timeout = checked_timeout("step_timeout", step_timeout)
        self._reset_timeout = checked_timeout("reset_timeout", reset_timeout)
        self._slices = _slices(len(fns), _num_workers(num_workers, len(fns)))
        self._batches = Batches(OWNER, len(fns), batch_size)
        import cloudpickle

        to = "a worker process"
        payloads = [
            pickle_factories(cloudpickle, fns, lo, hi, OWNER, to) for lo, hi in self._slices
        ]
        self._owner = os.getpid()
        self._pool = Pool(multiprocessing.get_context(self._context), self._slices)
        try:
            with processes.out_of_descriptors(self._pool.workers, len(self._slices)):
                self._pool.start()
            self._start(payloads, bool(autoreset), len(fns), shared_memory)
        except BaseException as exc:
            # The construction error is the one to report. After Ctrl-C (a factory that hangs)
            # the workers get a short grace, as in an interrupted close(), not close_timeout.
            self._release(interrupted=isinstance(exc, (KeyboardInterrupt, SystemExit)))
            raise
        _LIVE.add(self)

    def _start(
        self, payloads: list[bytes], autoreset: bool, num_envs: int, shared: bool | None
    ) -> None:
        pool = self._pool
        assert pool is not None
        arguments = [(p, autoreset, lo) for p, (lo, _) in zip(payloads, self._slices)]
        replies = pool.request(protocol.INIT, arguments, None, "the env factories")
        raise_first(
            (rank, error if error.remote_traceback else _not_started(error, pool))
            for reply in replies
            for rank, error in reply.errors
        )
        pool.started()
        readies = [(lo, reply.entries) for (lo, _), reply in zip(self._slices, replies)]
        observation_space, action_space = check_slice_spaces(OWNER, readies)
        super().__init__(num_envs, observation_space, action_space, autoreset=autoreset)
        self.metadata = replies[0].entries[1]
        self._set_self_resetting([flag for reply in replies for flag in reply.entries[2]])
        fixed = is_fixed_size(observation_space)
        if shared and not fixed:
            raise TypeError(_NOT_FIXED.format(space=observation_space))
        if fixed if shared is None else shared:
            self._shared = _shared_batch(observation_space, num_envs, required=bool(shared))
        if self._shared is not None:
            attach = (self._shared.name, observation_space, num_envs)
            attaches = [attach] * len(self._slices)
            replies = pool.request(protocol.ATTACH, attaches, None, "the observation space")
            raise_first(error for reply in replies for error in reply.errors)
            self._shared.unlink()  # every worker has it mapped: no name is left to leak

    # -- properties ----------------------------------------------------------------------------

    @property
    def context(self) -> str:
        """The ``multiprocessing`` start method of the workers."""
        return self._context

    @property
    def num_workers(self) -> int:
        """The number of worker processes."""
        return len(self._slices)

    @property
    def shared_memory(self) -> bool:
        """Whether observations pass through shared memory (else they are pickled)."""
        return self._shared is not None

    # -- the API -------------------------------------------------------------------------------

    def _request(
        self,
        op: int,
        arguments: Sequence[Any],
        timeout: float | None,
        what: str,
        per_env: Items | None = None,
        workers: Sequence[int] | None = None,
    ) -> Any:
        self._check_open()
        pool = self._pool
        assert pool is not None
        return pool.request(op, arguments, timeout, what, per_env, workers)

    def _entries(self, replies: list[Reply]) -> tuple[list[Any], list[Any]]:
        """Every sub-env's entry (None where it failed) and every error."""
        entries: list[Any] = []
        errors: list[Any] = []
        for (lo, hi), reply in zip(self._slices, replies):
            if reply.errors:
                errors.extend(reply.errors)
            if reply.entries is None:
                entries.extend([None] * (hi - lo))
            else:
                entries.extend(reply.entries)
        return entries, errors

    def _observations(self, entries: list[Any], position: int) -> Any:
        shared = self._shared
        if shared is not None:
            return copy_batch(shared.space, shared.batch)
        return self._stack([entry[position] for entry in entries])

    def _check_open(self) -> None:
        """VecEnvClosed after ``close()``; RuntimeError in a child forked from the owner
        (``_disown``), where the VecEnv counts as closed: no call of its own pays for it."""
        if self._closed:
            if self._forked:
                raise RuntimeError(_FORKED.format(owner=self._owner, pid=os.getpid()))
            super()._check_open()

    def _disown(self) -> None:
        """In a child forked from the owner (os.fork): the workers stay the owner's. This copy
        lets go of them without a word to them (``Pool.disown``), refuses every call from now
        on (``_check_open``), and its ``close()`` does nothing."""
        self._forked = True
        self._closed = True
        self._calling = threading.RLock()  # another thread may have held it at the fork
        pool, self._pool, self._shared = self._pool, None, None
        if pool is not None:
            pool.disown()

    def _raise_if_dead(self) -> None:
        """VecEnvClosed, or the error of a worker known to be dead: before the parent's own
        checks, so that a dead worker is what every later call reports."""
        self._check_open()
        assert self._pool is not None
        self._pool.raise_if_dead(look=False)

    @one_call
    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        self._raise_if_dead()
        # Options that cannot be sent are refused before anything changes (as for step()'s
        # actions): no seed drawn from a Generator, no result of send() dropped.
        seeds, per_env_options = self._reset_plan(seed, options, self._check_options)
        assert self._pool is not None
        self._pool.forget_posted()  # the sub-envs start over: results of send() do not matter
        self._batches.forget()
        replies = self._request(
            protocol.RESET,
            self._reset_arguments(seeds, per_env_options),
            self._reset_timeout,
            "the options",
            per_env_options,
        )
        entries, errors = self._entries(replies)
        raise_first(errors)
        observations = self._observations(entries, 1)
        self._reset_done()
        return VecResetResult(observations, [entry[0] for entry in entries])

    def _reset_arguments(
        self, seeds: Sequence[int | None], options: Sequence[dict[str, Any] | None]
    ) -> list[tuple[Sequence[int | None], Sequence[dict[str, Any] | None]]]:
        """Each worker's RESET argument: its sub-envs' seeds and options."""
        return [(seeds[lo:hi], options[lo:hi]) for lo, hi in self._slices]

    def _check_options(self, options: list[dict[str, Any] | None]) -> None:
        """TypeError where reset()'s ``options`` cannot be pickled (``_reset_plan``'s check,
        before any seed is drawn; the seeds are ints or None, which always can)."""
        if any(option is not None for option in options):
            assert self._pool is not None
            arguments = self._reset_arguments([None] * len(options), options)
            self._pool.encode(protocol.RESET, arguments, "the options", options)

    @one_call
    def step(self, actions: Any) -> VecStepResult[Any]:
        self._raise_if_dead()
        self._batches.check_idle("step")
        batch = self._checked_actions(actions)
        pool = self._pool
        assert pool is not None
        common = protocol.step_common(self.action_space, batch)
        if common is not None and pool.shares(len(common)):
            replies = pool.request_common(protocol.STEP, common, self._step_timeout)
        else:
            arguments: Sequence[Any]
            if common is None:
                arguments = step_arguments(self.action_space, batch, self._slices)
            else:
                arguments = protocol.cut(common, self._slices)
            per_env = ActionRows(self._action_checker(), batch)
            replies = pool.request(
                protocol.STEP, arguments, self._step_timeout, "the action", per_env
            )
        shared = self._shared
        return finish_step(self, self._slices, replies, None if shared is None else shared.take)

    # -- send / recv -----------------------------------------------------------------------------

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
        """
        self._raise_if_dead()
        ids = self._batches.env_ids(env_ids)
        checker, batch = self._checked_subset(actions, ids)
        pool = self._pool
        assert pool is not None
        plan = send_plan(self.action_space, batch, ids, self._slices)
        posts = [(pool.workers[worker], argument, tag) for worker, argument, tag in plan]
        rows = ActionRows(checker, batch, ids)
        timeout = self._step_timeout
        self._batches.post(
            lambda posted: pool.post(protocol.STEP, posts, "the action", posted, rows, timeout)
        )

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
            VecEnvWorkerError: a sub-env raised in its step (its worker's other results stay
                for the next ``recv()``), or a worker died or timed out (then every later call
                raises it, as after ``step()``).
        """
        self._raise_if_dead()
        pool, shared = self._pool, self._shared
        assert pool is not None
        take = None if shared is None else shared.take
        return self._batches.receive(self, batch_size, pool, self._step_timeout, take)

    @one_call
    def _at(
        self,
        command: str,
        env_ids: Sequence[int] | None,
        argument: Argument,
        what: str,
        values: list[Any] | None = None,
    ) -> list[Any]:
        self._raise_if_dead()  # before check_idle: the VecEnv is closed, or cannot be used
        self._batches.check_idle(command)
        op = protocol.NAMES.index(command)
        ids = None if env_ids is None else self._env_id_list(env_ids)
        workers, arguments, per_env = targeted(ids, self._slices, argument, values)
        replies = self._request(op, arguments, None, what, per_env, workers)
        return targeted_values(ids, self._slices, workers, replies)

    # -- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        """``VecEnv.close()``; after one that Ctrl-C cut short before it released everything,
        the next finishes releasing (it does nothing otherwise)."""
        if self._closed and (self._pool is not None or self._shared is not None):
            self._close()
        else:
            super().close()

    def _check_no_async_call(self) -> None:
        """Nothing: an async call runs the sync one under the call lock, which ``close()``
        waits for or cuts short (a watchdog, a timeout guard), as for a sync call."""

    def _close(self) -> None:
        # A call in progress uses the pipes and the shared memory until it ends. One in another
        # thread (close() from a watchdog or a stop button) is waited for, up to close_timeout.
        # After that, on Ctrl-C, or when close() runs inside the call (from a signal handler),
        # the workers are killed under it, which ends it (it raises VecEnvClosed).
        if self._calling._is_owned():  # type: ignore[attr-defined]
            self._cut_short()
            self._deferred = True  # released by the call as it unwinds (one_call)
            return
        self._wait_for_call(self._close_timeout)
        try:
            raise_first(self._release_all())
        finally:
            self._calling.release()

    def _cut_short(self) -> None:
        """Kill the workers under the call in progress, which ends it."""
        self._cut = True
        if self._pool is not None:
            processes.kill(self._pool.unreaped())

    def _release_deferred(self) -> None:
        self._release_all()  # killed workers close no sub-env: no close errors

    def _release_all(self) -> list[tuple[int, VecEnvWorkerError]]:
        """``_release()`` at close(): what was in flight is gone with the workers too."""
        self._batches.forget()
        return self._release()

    def _release(self, *, interrupted: bool = False) -> list[tuple[int, VecEnvWorkerError]]:
        """Stop the workers and free the shared memory; the sub-envs' close errors. What a
        second Ctrl-C keeps from being released stays for the next call (close(), or at exit).
        ``interrupted``: after Ctrl-C, with a short grace only (``Pool.stop``)."""
        pool = self._pool
        try:
            if pool is not None and os.getpid() == self._owner:  # never a forked copy's
                return pool.stop(self._close_timeout, interrupted=interrupted)
            return []
        finally:
            if pool is not None and (pool.released or os.getpid() != self._owner):
                self._pool = None
            if self._shared is not None:
                self._shared.release()
                self._shared = None
            if self._pool is None:
                _LIVE.discard(self)

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None:  # not closed, or Ctrl-C cut close() short
            with contextlib.suppress(Exception):
                self.close()


def _shared_batch(space: Any, num_envs: int, *, required: bool) -> SharedBatch | None:
    """The observations' block, or None where it does not fit in /dev/shm and is not
    ``required`` (shared_memory=None): warned, the observations are pickled."""
    try:
        return SharedBatch.create(space, num_envs)
    except NoRoom as exc:
        keep = "use fewer sub-envs or smaller observations"
        if required:
            raise OSError(
                exc.errno,
                f"ProcVecEnv {exc.strerror}. Pass shared_memory=False to pickle the observations "
                f"instead, {keep}, or {exc.more}.",
            ) from None
        instead = "it pickles the observations instead (vec.shared_memory is False)"
        warn_no_room(exc, instead, keep)
        return None


def _not_started(error: VecEnvWorkerError, pool: Pool) -> VecEnvWorkerError:
    """The error of a worker that died before it built its sub-envs: what it printed, if
    anything, is above; with a start method that re-imports the main module, and unless a
    signal killed it (the out-of-memory killer), it may have been the missing main guard."""
    if error.message != DIED:
        return error
    message = _NOT_STARTED.format(died=error.message)
    method = pool.ctx.get_start_method()
    if method != "fork" and not _killed(pool.workers[error.worker or 0].process):
        message += _REIMPORTED.format(method=method)
    started = VecEnvWorkerError(
        error.rank, error.exc_type, message, worker=error.worker, ranks=error.ranks
    )
    return noted(started, getattr(error, "__notes__", []))


def _killed(process: Any) -> bool:
    """Whether ``process`` is known to have been killed by a signal."""
    try:
        code = process.exitcode
    except ValueError:  # closed: its status is gone
        return False
    return code is not None and code < 0


# Close what is still open at exit, before multiprocessing terminates the daemonic workers
# (atexit runs handlers last-registered first, and multiprocessing.util registered earlier).
_LIVE: weakref.WeakSet[ProcVecEnv] = weakref.WeakSet()


def _close_all() -> None:
    for vec in list(_LIVE):
        with contextlib.suppress(Exception):
            vec.close()


def _after_fork_in_child() -> None:
    """A child forked from the owner of ProcVecEnvs never uses, closes or stops their workers."""
    for vec in list(_LIVE):
        vec._disown()
    _LIVE.clear()


atexit.register(_close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
