"""The parent's side of the worker actors: starting, commands, replies, dead actors, stopping.

Every command is pickled for every actor before anything is sent, so an argument that cannot be
pickled fails without leaving the actors out of step. A call sends one request per actor and
waits for all of them (one round trip per actor). An actor that died, or that does not answer
within the timeout (it is then killed), is reported as ``VecEnvWorkerError`` naming it and its
sub-envs, and every later call raises that error again without contacting the actors; so is
every actor once Ray is shut down in this process or connected to another cluster (checked
before each call: a call would otherwise start a new cluster, or fail naming no worker). The
replies to ``send()`` are kept, fetched and decoded only when ``recv()`` takes them (the pool is
its ``Inbox``), so Ctrl-C during ``recv()`` loses none.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import time
from collections import deque
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.ray._actor import CutShort
from sekai.ray._cluster import actors_killed, cluster_id
from sekai.vector._batches import Arrival
from sekai.vector._contract.errors import noted, unpicklable_detail, worker_error_class
from sekai.vector._remote import Items, Reply, read_reply

__all__ = ["DIED", "ActorHandle", "ActorPool"]

DIED = "worker actor died unexpectedly"
STOPPED = "worker actor was stopped by close()"
SHUT_DOWN = "worker actor lost: Ray was shut down in this process (ray.shutdown()), ending it"
ELSEWHERE = (
    "worker actor lost: this process is now connected to another Ray cluster than the one the "
    "actor ran on (ray.shutdown() then ray.init()?)"
)


class ActorHandle:
    """A worker actor and the sub-envs ``lo:hi`` it runs."""

    __slots__ = ("actor", "dead", "hi", "index", "lo")

    def __init__(self, index: int, lo: int, hi: int, actor: Any) -> None:
        self.index = index
        self.lo = lo
        self.hi = hi
        self.actor = actor
        self.dead: VecEnvWorkerError | None = None  # why it is dead, once it is

    def failure(
        self, exc_type: str, message: str, cls: type | None = None, note: str = ""
    ) -> VecEnvWorkerError:
        """The error naming this actor (and its sub-envs when it runs several), deriving from
        ``cls`` too when given (from ``TimeoutError`` for a timeout), with ``note`` added when
        given, as ProcVecEnv's do."""
        if cls is None and exc_type == "TimeoutError":
            cls = TimeoutError
        error = worker_error_class(cls)
        made = error(self.lo, exc_type, message, worker=self.index, ranks=range(self.lo, self.hi))
        return noted(made, [note] if note else [])

    def death(self) -> VecEnvWorkerError:
        """A new error like the one this actor died with (each call raises its own), with its
        cause and notes."""
        dead = self.dead or self.failure("ActorDiedError", DIED)
        error = noted(self.failure(dead.exc_type, dead.message), getattr(dead, "__notes__", []))
        error.__cause__ = dead.__cause__
        return error


class ActorPool:
    """The worker actors of one RayVecEnv."""

    def __init__(self, ray: ModuleType, slices: Sequence[tuple[int, int]]) -> None:
        self.ray = ray
        self.cluster = cluster_id(ray)  # the cluster the actors run on
        self.slices = list(slices)
        self.handles: list[ActorHandle] = []
        self.posted: dict[Any, tuple[ActorHandle, Any]] = {}  # ref -> (actor, env_ids): post()
        # Answered posted calls, (actor, ref) until recv() fetches and decodes them.
        self._arrived: deque[Arrival] = deque()

    def start(self, actor_class: Any, options: dict[str, Any]) -> None:
        """Create one actor per slice (Ray starts them in the background)."""
        configured = actor_class.options(**options, max_restarts=0, max_task_retries=0)
        for index, (lo, hi) in enumerate(self.slices):
            self.handles.append(ActorHandle(index, lo, hi, configured.remote()))

    # -- commands ----------------------------------------------------------------------------

    def raise_if_dead(self) -> None:
        """Raise the error of the first dead actor (every call needs all of them); every actor
        is dead once the cluster they ran on is gone from this process."""
        lost = self.cluster_lost()
        if lost is not None:
            for handle in self.handles:
                if handle.dead is None:  # nothing to kill: Ray cannot reach the actors
                    handle.dead = handle.failure("ActorDiedError", lost)
        for handle in self.handles:
            if handle.dead is not None:
                error = handle.death()
                raise error from error.__cause__

    def encode(
        self,
        arguments: Sequence[Any],
        what: str,
        per_env: Items | None = None,
        handles: Sequence[ActorHandle] | None = None,
        *,
        shared: bool = False,
    ) -> list[bytes]:
        """``arguments[i]`` pickled for actor ``i`` (of ``handles``: all by default), all before
        anything is sent.

        Raises:
            TypeError: an argument cannot be pickled, naming the sub-env whose item fails
                (found in ``per_env`` when given, else in the argument's per-sub-env list),
                or no sub-env when the argument is ``shared`` by all of them.
        """
        dumps = self.ray.cloudpickle.dumps
        payloads: list[bytes] = []
        bounds = self.slices if handles is None else [(h.lo, h.hi) for h in handles]
        for (lo, hi), argument in zip(bounds, arguments):
            try:
                payloads.append(dumps(argument, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception as exc:
                detail = ""
                if shared:
                    raise TypeError(
                        f"RayVecEnv cannot send {what} to the worker actors: it cannot be "
                        f"pickled ({type(exc).__name__}: {exc})."
                    ) from exc
                if per_env is None:
                    offset = _failing_item(dumps, argument, hi - lo)
                    rank = lo + offset
                    if isinstance(argument, (list, tuple)) and len(argument) == hi - lo:
                        detail = unpicklable_detail(argument[offset], dumps)
                else:
                    rank = next((r for r in range(lo, hi) if not _pickles(dumps, per_env[r])), lo)
                raise TypeError(
                    f"RayVecEnv cannot send {what} for sub-env {rank}{detail} to its worker "
                    f"actor: it cannot be pickled ({type(exc).__name__}: {exc})."
                ) from exc
        return payloads

    def cluster_lost(self) -> str | None:
        """Why the actors' cluster is out of reach (Ray shut down, or connected to another
        cluster), or None."""
        if not self.ray.is_initialized():
            return SHUT_DOWN
        if cluster_id(self.ray) != self.cluster:
            return ELSEWHERE
        return None

    def send(
        self, method: str, payloads: Sequence[Any], handles: Sequence[ActorHandle] | None = None
    ) -> list[Any]:
        """Call ``method(payloads[i])`` on actor ``i`` (of ``handles``: all by default); the
        object refs of the replies (the ``Reply`` of a call Ray could not submit)."""
        self.raise_if_dead()
        return [
            self._submit(handle, method, payload)
            for handle, payload in zip(self.handles if handles is None else handles, payloads)
        ]

    def post(
        self,
        method: str,
        posts: Sequence[tuple[ActorHandle, bytes, Any]],
        posted: Callable[[Any], None],
    ) -> None:
        """Call ``method(payload)`` on some actors without waiting; each reply is kept as an
        ``Arrival`` for the sub-envs ``env_ids`` of its ``(actor, payload, env_ids)``, and
        ``posted(env_ids)`` is called once the call is submitted (or answered with the
        error of its submission)."""
        self.raise_if_dead()
        for handle, payload, tag in posts:
            ref = self._submit(handle, method, payload)
            if isinstance(ref, Reply):
                self._arrived += (Arrival(tag, None, ref),)
            else:
                self.posted[ref] = (handle, tag)
            posted(tag)

    def _submit(self, handle: ActorHandle, method: str, payload: Any) -> Any:
        """The object ref of ``method(payload)`` on the actor of ``handle``, or the ``Reply``
        reporting that Ray could not submit it (the actor did not run it)."""
        try:
            return getattr(handle.actor, method).remote(payload)
        except Exception as exc:
            self.raise_if_dead()  # the cluster is gone: every actor with it
            head = (str(exc).strip().splitlines() or [""])[0]
            message = f"Ray cannot submit {method}() to worker {handle.index}: {head}"
            error = handle.failure(type(exc).__name__, message, type(exc))
            error.__cause__ = exc
            return Reply(None, [(handle.lo, error)])

    def forget_posted(self) -> None:
        """Drop the replies of every posted call (their calls still run, in order)."""
        self.posted.clear()
        self._arrived.clear()

    # -- the inbox of recv() (``sekai.vector._batches.Inbox``) --------------------------------

    def wait(self, timeout: float | None, what: str) -> None:
        """Return once a posted call has answered, waiting for one if none has.

        After ``timeout`` seconds without any, every actor with a posted call is killed and
        each of its calls answered with its death.

        Raises:
            RuntimeError: no call is posted.
        """
        if self._arrived:
            return
        posted = self.posted
        if not posted:
            raise RuntimeError("no posted call is waiting for its reply")
        refs = list(posted)
        if not _wait(self.ray, refs, 1, timeout)[0]:
            for ref in refs:
                handle = posted[ref][0]
                if handle.dead is None:
                    self._late(handle, timeout, what)
                self._keep(ref, None, self.lost(handle))
            return
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in ready:
            self._keep(ref, (posted[ref][0], ref), None)

    def first(self) -> Arrival | None:
        """The first answered call, fetched and decoded (again, if an interrupt cut that
        short)."""
        if not self._arrived:
            return None
        arrival = self._arrived[0]
        if arrival.reply is None:
            handle, ref = arrival.raw
            try:
                body = self.ray.get(ref)
            except Exception as exc:
                arrival.reply = self._failed(handle, exc)
            else:
                arrival.reply = self.decode(handle, body)
        return arrival

    def drop(self) -> None:
        """Forget the first answered call (recv() has it)."""
        self._arrived.popleft()

    def _keep(self, ref: Any, raw: Any, outcome: Reply | None) -> None:
        """Keep the answer to the posted call ``ref`` for recv()."""
        arrival = Arrival(self.posted[ref][1], raw, outcome)
        # With no call in between: the call is either posted or kept, never lost or both.
        del self.posted[ref]
        self._arrived += (arrival,)

    def collect(
        self,
        refs: Sequence[Any],
        timeout: float | None,
        what: str,
        handles: Sequence[ActorHandle] | None = None,
    ) -> list[Reply]:
        """Wait for every reply of the actors (of ``handles``: all by default), ``timeout``
        seconds at most: late actors are killed."""
        ray = self.ray
        handles = self.handles if handles is None else handles
        deadline = None if timeout is None else time.monotonic() + timeout
        sent = [ref for ref in refs if not isinstance(ref, Reply)]
        if len(sent) == len(refs):
            try:  # the usual case: every actor answers
                bodies = ray.get(sent, timeout=timeout)
            except Exception:  # an actor died or is late: sort it out one by one below
                pass
            else:
                return [self.decode(h, body) for h, body in zip(handles, bodies)]
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        late_refs = set(_wait(ray, sent, len(sent), remaining)[1]) if sent else set()
        outcomes: list[Reply] = []
        for handle, ref in zip(handles, refs):
            if isinstance(ref, Reply):  # never submitted
                outcomes.append(ref)
                continue
            if ref in late_refs:
                outcomes.append(self._late(handle, timeout, what))
                continue
            try:
                body = ray.get(ref)
            except Exception as exc:
                outcomes.append(self._failed(handle, exc))
            else:
                outcomes.append(self.decode(handle, body))
        return outcomes

    async def collect_async(
        self, refs: Sequence[Any], timeout: float | None, what: str
    ) -> list[Reply]:
        """``collect()`` awaiting the object refs, so the event loop keeps running."""

        async def one(ref: Any) -> Any:
            if isinstance(ref, Reply):  # never submitted
                return ref
            future = asyncio.wrap_future(ref.future())
            return await (future if timeout is None else asyncio.wait_for(future, timeout))

        results = await asyncio.gather(*(one(ref) for ref in refs), return_exceptions=True)
        outcomes: list[Reply] = []
        for handle, result in zip(self.handles, results):
            if isinstance(result, Reply):
                outcomes.append(result)
            elif isinstance(result, (asyncio.TimeoutError, TimeoutError)) and not isinstance(
                result, self.ray.exceptions.RayError
            ):
                outcomes.append(self._late(handle, timeout, what))
            elif isinstance(result, asyncio.CancelledError):
                raise result
            elif isinstance(result, BaseException):
                outcomes.append(self._failed(handle, result))
            else:
                outcomes.append(self.decode(handle, result))
        return outcomes

    async def collect_anyway(
        self, refs: Sequence[Any], timeout: float | None, what: str
    ) -> list[Reply]:
        """``collect_async()`` for a call whose awaiting was cancelled: the actors run it all
        the same (Ray cannot take it back), so their replies are awaited through further
        cancellations, or without the event loop once this wait is cancelled itself (the
        loop is shutting down)."""
        task = asyncio.ensure_future(self.collect_async(refs, timeout, what))
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        return self.collect(refs, timeout, what) if task.cancelled() else task.result()

    # -- replies -----------------------------------------------------------------------------

    @staticmethod
    def decode(handle: ActorHandle, body: Any) -> Reply:
        """The outcome of an actor's reply bytes (see ``sekai.ray._actor``)."""
        try:
            entries, errors = read_reply(body, handle.lo, handle.index)
        except Exception as exc:  # e.g. a class that exists only on the worker's node
            message = f"the reply cannot be unpickled in the parent process: {exc}"
            error = handle.failure(type(exc).__name__, message, type(exc))
            return Reply(None, [(handle.lo, error)])
        return Reply(entries, errors)

    def _late(self, handle: ActorHandle, timeout: float | None, what: str) -> Reply:
        message = (
            f"worker {handle.index} did not answer {what}() within {timeout:g} s and was stopped"
        )
        self.bury(handle, "TimeoutError", message, None)
        return self.lost(handle)

    def _failed(self, handle: ActorHandle, exc: BaseException) -> Reply:
        """The outcome of a reply that Ray could not deliver."""
        exceptions = self.ray.exceptions
        if isinstance(exc, exceptions.RayTaskError):
            # The actor's methods catch every Exception: a BaseException (KeyboardInterrupt, a
            # CancelledError, ...) cut the command short, its sub-envs left half done. The actor
            # is stopped, as ProcVecEnv's worker dies of it, so no call finds them out of step.
            cause = getattr(exc, "cause", None) or exc
            exc_type, text = type(cause).__name__, str(cause)
            if isinstance(cause, CutShort):
                exc_type, text = cause.exc_type, cause.message
            message = f"{text} (not an Exception: the worker actor was stopped mid-command)"
            self.bury(handle, exc_type, message, exc)
        elif isinstance(exc, exceptions.RayActorError):
            self.bury(handle, type(exc).__name__, DIED, exc, _death_note(exc))
        else:
            head = (str(exc).strip().splitlines() or [""])[0]
            self.bury(handle, type(exc).__name__, head or DIED, exc)
        return self.lost(handle)

    @staticmethod
    def lost(handle: ActorHandle) -> Reply:
        """The outcome of a dead actor: its error, reported by its first sub-env."""
        return Reply(None, [(handle.lo, handle.death())])

    def bury(
        self,
        handle: ActorHandle,
        exc_type: str,
        message: str,
        cause: BaseException | None,
        note: str = "",
    ) -> None:
        """Mark ``handle`` dead (every later call raises its error) and make sure it is."""
        if handle.dead is None:
            handle.dead = handle.failure(exc_type, message, note=note)
            handle.dead.__cause__ = cause
        if self.cluster_lost() is None:  # else nothing to kill, and Ray would start a cluster
            with contextlib.suppress(Exception):
                self.ray.kill(handle.actor, no_restart=True)

    # -- stopping ----------------------------------------------------------------------------

    def stop(self, timeout: float) -> list[tuple[int, VecEnvWorkerError]]:
        """Close the sub-envs and kill every actor; the sub-envs' close errors by sub-env.

        Waits ``timeout`` seconds in all for the actors to close their sub-envs (each does
        after the calls it is running), then kills every actor, whether it answered or not.
        Never raises for Ray's own failures (Ray shut down, actors dead), so ``close()``
        always returns.
        """
        errors: list[tuple[int, VecEnvWorkerError]] = []
        ray = self.ray
        try:
            if self.cluster_lost() is not None:  # ray.shutdown() already ended the actors
                return errors
            live = [h for h in self.handles if h.dead is None]
            refs = [h.actor.close.remote() for h in live]
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout) if refs else ([], [])
            done = set(ready)
            for handle, ref in zip(live, refs):
                if ref in done:
                    with contextlib.suppress(Exception):  # a dead actor: nothing left to close
                        errors.extend(self.decode(handle, ray.get(ref)).errors)
        except Exception:  # Ray itself failed: the actors are killed below all the same
            pass
        finally:
            self.kill()
        return errors

    def kill(self) -> None:
        """Kill every actor, which ends the calls they run; every later call raises."""
        for handle in self.handles:
            self.bury(handle, "ActorDiedError", STOPPED, None)
        actors_killed()


def _death_note(exc: BaseException) -> str:
    """What Ray says of an actor's death (its process died, ``ray.kill``, out of memory, its
    node lost), as a note for its ``DIED`` error: Ray does not tell the exit status or signal.
    "" when it says nothing more than that the actor died."""
    headline = getattr(exc, "BASE_ERROR_MSG", None)
    where: dict[str, str] = {}
    cause: list[str] = []
    # Ray's text: a headline, "\tkey: value" lines naming the actor, then the cause.
    for line in str(getattr(exc, "error_msg", None) or exc).splitlines():
        if line.startswith("\t"):
            key, _, value = line.strip().partition(": ")
            where[key] = value
        elif line.strip() and line.strip() != headline:
            cause.append(line.strip())
    if not cause:
        return ""
    on = f" (pid {where['pid']} on {where.get('ip', 'its node')})" if "pid" in where else ""
    return f"Ray, on the worker actor{on}: {' '.join(cause)}"


def _pickles(dumps: Any, item: Any) -> bool:
    try:
        dumps(item)
    except Exception:
        return False
    return True


def _failing_item(dumps: Any, argument: Any, size: int) -> int:
    """The index of the first item of a per-sub-env list that cannot be pickled (else 0)."""
    if isinstance(argument, (list, tuple)) and len(argument) == size:
        for offset, item in enumerate(argument):
            try:
                dumps(item)
            except Exception:
                return offset
    return 0


def _wait(ray: ModuleType, refs: list[Any], count: int, timeout: float | None) -> Any:
    """``ray.wait`` for ``count`` of ``refs``, ``timeout`` seconds at most (None: no limit,
    where ``ray.wait`` itself stops after 10**6 s)."""
    while True:
        ready, late = ray.wait(refs, num_returns=count, timeout=timeout)
        if len(ready) >= count or timeout is not None:
            return ready, late
