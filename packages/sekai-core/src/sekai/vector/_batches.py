"""The parent's side of batched replies and of ``send()`` / ``recv()``, for the backends whose
sub-envs live elsewhere (ProcVecEnv workers, RayVecEnv actors).

A worker or actor replies once per command for every sub-env it stepped (``_remote.step_slice``):
rewards and flags as arrays, infos packed into columns. Each reply becomes a ``Chunk``; a
``step()`` or a ``recv()`` joins chunks into one result, unpacking infos only when read
(``PackedInfos``). ``Batches`` keeps what ``send()`` / ``recv()`` share: which sub-envs are in
flight, the chunks that arrived and are not handed out yet, and the checks of ``env_ids``.

Ctrl-C during ``send()`` or ``recv()`` loses nothing ``Batches`` holds. ``send()`` posts
its commands with Ctrl-C held (``post``): each sub-env counts as in flight once its command
reached its worker, never before or long after. A reply to ``send()`` stays in its pool
(``Inbox``) until ``Batches`` has taken it, decoded; ``recv()`` builds its result before it
changes anything, and records what it took last. The work a KeyboardInterrupt can land in
(waiting, unpickling, joining, copying) thus leaves every reply where the next ``recv()``
finds it. The stores that move a reply from one place to the next follow each other with no
call in between, where Python (3.10 on) raises no pending KeyboardInterrupt. Only a Ctrl-C as
``recv()`` returns loses its result, as it would any function's return value.
"""

from __future__ import annotations

import functools
import operator
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from sekai.error import VecEnvWorkerError
from sekai.spaces import Space
from sekai.spaces._bounds import exact_ints
from sekai.vector._contract.actions import ActionChecker
from sekai.vector._contract.batching import take_rows
from sekai.vector._interrupts import holding_interrupts
from sekai.vector._packing import received, unpack
from sekai.vector._remote import encode_slices
from sekai.vector.infos import PackedInfos
from sekai.vector.result import VecRecvResult, VecStepResult

if TYPE_CHECKING:
    from sekai.vector.vec_env import VecEnv

__all__ = [
    "ActionRows",
    "Arrival",
    "Batches",
    "Chunk",
    "Errors",
    "Inbox",
    "Take",
    "finish_step",
    "join",
    "raise_first",
    "send_plan",
    "step_arguments",
    "targeted",
    "targeted_values",
]

Errors = list[tuple[int, VecEnvWorkerError]]

IntArray = NDArray[np.intp]


class Chunk:
    """Rows of one reply: the sub-envs ``env_ids`` are rows ``rows`` of the reply.

    Attributes:
        env_ids: the sub-envs, in row order.
        rows: the reply's rows they are (an index array).
        infos: the reply's packed infos (all its rows).
        arrays: ``(rewards, terminated, truncated, packed observations)`` of all the reply's
            rows, or None when they are in shared memory.
    """

    __slots__ = ("arrays", "env_ids", "infos", "rows")

    def __init__(self, env_ids: IntArray, rows: IntArray, infos: Any, arrays: Any) -> None:
        self.env_ids = env_ids
        self.rows = rows
        self.infos = infos
        self.arrays = arrays

    @classmethod
    def arrived(cls, env_ids: IntArray, rows: IntArray, entries: Any) -> Chunk:
        """The chunk of a STEP reply's ``(infos, arrays)`` entries, as they arrived."""
        infos, arrays = entries
        return cls(env_ids, rows, received(infos), arrays)

    def split(self, count: int) -> tuple[Chunk, Chunk]:
        """The first ``count`` rows and the rest (sharing the infos, unpickled once)."""
        head = Chunk(self.env_ids[:count], self.rows[:count], self.infos, self.arrays)
        tail = Chunk(self.env_ids[count:], self.rows[count:], self.infos, self.arrays)
        return head, tail


Take = Callable[[IntArray | None], tuple[Any, Any, Any, Any]]


class Arrival:
    """A reply to ``send()`` as its pool received it.

    Attributes:
        env_ids: the sub-envs it answers for.
        raw: what the pool decodes it from (the pool's own), until it is decoded.
        reply: the decoded reply (with ``entries`` and ``errors``), None until decoded.
    """

    __slots__ = ("env_ids", "raw", "reply")

    def __init__(self, env_ids: IntArray, raw: Any, reply: Any = None) -> None:
        self.env_ids = env_ids
        self.raw = raw
        self.reply = reply


class Inbox(Protocol):
    """Where a pool keeps the replies to ``send()``, in arrival order, until ``Batches`` has
    taken them."""

    def wait(self, timeout: float | None, what: str) -> None:
        """Return once a reply is kept, waiting for one if none is (``timeout``: as the
        VecEnv's, for command ``what``)."""

    def first(self) -> Arrival | None:
        """The first reply kept, decoded (again, if an interrupt cut its decoding short), or
        None when none is kept."""

    def drop(self) -> None:
        """Forget the first reply kept (``Batches`` has it)."""


def join(
    chunks: Sequence[Chunk], take: Take | None, stack: Callable[[list[Any]], Any], whole: bool
) -> tuple[Any, Any, Any, Any, PackedInfos]:
    """``(observations, rewards, terminated, truncated, infos)`` of the chunks' rows in order.

    Args:
        chunks: the chunks.
        take: copies the rows of the given sub-envs (None: every sub-env) out of shared
            memory, or None when the chunks carry their arrays.
        stack: batches a list of observations (the VecEnv's ``_stack``).
        whole: the chunks hold every sub-env in order (a ``step()``): shared memory is copied
            whole.
    """
    infos = PackedInfos([(chunk.rows, chunk.infos) for chunk in chunks])
    if take is not None:
        ids = None if whole else np.concatenate([chunk.env_ids for chunk in chunks])
        observations, rewards, terminated, truncated = take(ids)
        return observations, rewards, terminated, truncated, infos
    parts = [[array[chunk.rows] for array in chunk.arrays[:3]] for chunk in chunks]
    rewards, terminated, truncated = (np.concatenate(column) for column in zip(*parts))
    observations = []
    for chunk in chunks:
        values = unpack(chunk.arrays[3])
        observations.extend(values[row] for row in chunk.rows.tolist())
    return stack(observations), rewards, terminated, truncated, infos


@functools.lru_cache(maxsize=4096)
def _ranges(lo: int, hi: int) -> tuple[IntArray, IntArray]:
    """The sub-envs ``lo:hi`` and their rows in a reply, read-only (a worker's slice is the same
    on every step: made once, not twice per worker and step)."""
    ids, rows = np.arange(lo, hi), np.arange(hi - lo)
    ids.flags.writeable = rows.flags.writeable = False
    return ids, rows


def _outcomes(chunk: Chunk, take: Take | None) -> list[tuple[float, bool, bool]]:
    """``(reward, terminated, truncated)`` of each of the chunk's rows (``take``: copies them
    out of shared memory)."""
    if take is None:
        arrays = [array[chunk.rows] for array in chunk.arrays[:3]]
    else:
        arrays = list(take(chunk.env_ids)[1:])
    return list(zip(*(array.tolist() for array in arrays)))


def step_arguments(
    space: Space[Any], batch: Any, slices: Sequence[tuple[int, int]]
) -> list[tuple[None, Any]]:
    """The STEP argument of each worker for a ``step()``: every sub-env, its rows of the
    checked batch of actions (encoded)."""
    return [(None, actions) for actions in encode_slices(space, batch, slices)]


def send_plan(
    space: Space[Any], batch: Any, env_ids: IntArray, slices: Sequence[tuple[int, int]]
) -> list[tuple[int, tuple[list[int], Any], IntArray]]:
    """How ``send()`` reaches the workers: ``(worker, argument, env_ids)`` for each worker that
    runs some of ``env_ids``; the argument holds their positions in its slice and their rows of
    the checked batch of actions (encoded)."""
    owners = np.searchsorted(_uppers(tuple(slices)), env_ids, side="right")
    # Each worker's rows made contiguous (in their order in env_ids), so that the batch is
    # encoded once and cut per worker, as for step().
    order = np.argsort(owners, kind="stable")
    owners, env_ids = owners[order], env_ids[order]
    if order.size > 1 and (order[1:] < order[:-1]).any():
        batch = take_rows(space, batch, order)
    first = np.ones(owners.size, dtype=bool)  # each worker's first row
    np.not_equal(owners[1:], owners[:-1], out=first[1:])
    starts = np.flatnonzero(first).tolist()
    bounds = list(zip(starts, [*starts[1:], owners.size]))
    plan = []
    for (lo, hi), actions in zip(bounds, encode_slices(space, batch, bounds)):
        worker = int(owners[lo])
        ids = env_ids[lo:hi]
        plan.append((worker, ((ids - slices[worker][0]).tolist(), actions), ids))
    return plan


def targeted(
    env_ids: list[int] | None,
    slices: Sequence[tuple[int, int]],
    argument: Callable[[list[int] | None, Sequence[int]], Any],
    values: list[Any] | None = None,
) -> tuple[list[int] | None, list[Any], list[Any] | None]:
    """How a get_attr, set_attr or call of the (checked, distinct) sub-envs ``env_ids`` (None:
    all) reaches the workers: only those that run some of them, in worker order.

    Args:
        env_ids: the sub-envs.
        slices: each worker's sub-envs ``lo:hi``.
        argument: a worker's argument from the positions of its sub-envs in its slice (None:
            the whole slice) and, for each, its index in ``env_ids`` (its rank when None).
        values: set_attr's values, one per sub-env of ``env_ids``.

    Returns:
        The workers (None: all), their arguments, and ``values`` by sub-env (None for those
        left out), where the pools look up the one that cannot be pickled.
    """
    if env_ids is None:
        return None, [argument(None, range(lo, hi)) for lo, hi in slices], values
    owners = np.searchsorted(_uppers(tuple(slices)), env_ids, side="right").tolist()
    plan: dict[int, tuple[list[int], list[int]]] = {}
    for index, (worker, rank) in enumerate(zip(owners, env_ids)):
        positions, indices = plan.setdefault(worker, ([], []))
        positions.append(rank - slices[worker][0])
        indices.append(index)
    workers = sorted(plan)
    per_env = None
    if values is not None:
        per_env = [None] * slices[-1][1]
        for rank, value in zip(env_ids, values):
            per_env[rank] = value
    return workers, [argument(*plan[worker]) for worker in workers], per_env


def targeted_values(
    env_ids: Sequence[int] | None,
    slices: Sequence[tuple[int, int]],
    workers: Sequence[int] | None,
    replies: Sequence[tuple[Any, Errors]],
) -> list[Any]:
    """The values of the sub-envs ``env_ids`` from the replies of ``workers`` (one entry per
    sub-env of each slice), in the order of ``env_ids``; after an error, raises that of the
    lowest sub-env (rule 9). ``env_ids`` and ``workers`` None: every one, in order."""
    raise_first(error for reply in replies for error in reply[1])
    if env_ids is None or workers is None:
        return [entry for entries, _ in replies for entry in entries or ()]
    values: dict[int, Any] = {}
    for worker, (entries, _) in zip(workers, replies):
        if entries is not None:  # set_attr's replies carry no values
            values.update(zip(range(*slices[worker]), entries))
    return [values.get(rank) for rank in env_ids]  # None only for set_attr


@functools.lru_cache(maxsize=64)
def _uppers(slices: tuple[tuple[int, int], ...]) -> IntArray:
    """The end of each worker's slice (a VecEnv's slices never change: made once)."""
    uppers = np.array([hi for _, hi in slices], dtype=np.intp)
    uppers.flags.writeable = False
    return uppers


def finish_step(
    vec: VecEnv,
    slices: Sequence[tuple[int, int]],
    replies: Sequence[tuple[Any, Errors]],
    take: Take | None,
    interrupt: BaseException | None = None,
) -> VecStepResult[Any]:
    """The result of a ``step()`` from every worker's ``(entries, errors)`` reply.

    After an error, records the steps of the sub-envs that did not fail and raises the error
    of the lowest sub-env (rule 9).

    Args:
        vec: the VecEnv (its dtypes, frozen sub-envs and stacking).
        slices: each worker's sub-envs ``lo:hi``.
        replies: each worker's entries (None when lost) and errors.
        take: copies rows out of shared memory, or None when the replies carry them.
        interrupt: what cut the call short in the parent (the cancellation of an awaited
            step) after the workers had the step: it is raised instead, once the sub-envs that
            stepped are recorded as for an error.
    """
    if take is not None and interrupt is None and not any(reply[1] for reply in replies):
        # The usual step: every sub-env's arrays are in shared memory, so only the infos are
        # joined, one packed column per reply, with no chunk to make per worker.
        columns = [(hi - lo, reply[0][0]) for (lo, hi), reply in zip(slices, replies)]
        observations, rewards, terminated, truncated = take(None)
        infos = PackedInfos(columns, vec.num_envs)
        return vec._step_result(observations, rewards, terminated, truncated, infos)
    chunks: list[Chunk] = []
    errors: Errors = []
    for (lo, hi), (entries, reply_errors) in zip(slices, replies):
        errors.extend(reply_errors)
        if entries is not None:
            chunks.append(Chunk.arrived(*_ranges(lo, hi), entries))
    error = first_error(errors) if interrupt is None else interrupt
    if error is not None:
        failed = {rank for rank, _ in errors}
        stepped = [
            (rank, *outcome)
            for chunk in chunks
            for rank, outcome in zip(chunk.env_ids.tolist(), _outcomes(chunk, take))
            if rank not in failed
        ]
        # Their infos, read only to tell which of them froze (VecEnv._froze).
        infos = PackedInfos([(chunk.rows, chunk.infos) for chunk in chunks])
        order = [rank for chunk in chunks for rank in chunk.env_ids.tolist()]
        rows = {rank: row for row, rank in enumerate(order)}
        raise vec._failed_step(error, stepped, lambda rank: infos.at(rows[rank]))
    observations, rewards, terminated, truncated, infos = join(chunks, take, vec._stack, True)
    return vec._step_result(observations, rewards, terminated, truncated, infos)


class Batches:
    """``send()`` / ``recv()`` bookkeeping of one VecEnv.

    Args:
        owner: the VecEnv class name, for messages.
        num_envs: the number of sub-envs.
        batch_size: ``recv()``'s default batch size (None: ``num_envs``).
    """

    def __init__(self, owner: str, num_envs: int, batch_size: Any) -> None:
        self.owner = owner
        self.num_envs = num_envs
        self.batch_size = self._size(batch_size, "batch_size", num_envs)
        self.in_flight = np.zeros(num_envs, dtype=bool)  # sent, not handed out by recv() yet
        self.ready: deque[Chunk] = deque()
        self.num_ready = 0
        # The errors of replies taken and not raised yet, with the sub-envs each reports.
        self.errors: list[tuple[int, VecEnvWorkerError, IntArray]] = []
        self._taken: Arrival | None = None  # the last reply taken from the inbox

    def _size(self, value: Any, name: str, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int or None, got {type(value).__name__}.")
        if not 1 <= value <= self.num_envs:
            raise ValueError(f"{name} must be in [1, {self.num_envs}] (num_envs), got {value}.")
        return int(value)

    def check_idle(self, method: str) -> None:
        """``method`` needs every sub-env: raise while some are in flight, or have failed in a
        step of ``send()`` that ``recv()`` has not reported yet."""
        if self.in_flight.any():
            ids = np.flatnonzero(self.in_flight).tolist()
            raise RuntimeError(
                f"{self.owner}.{method}() cannot run while sub-envs {_short(ids)} have actions "
                "sent with send() whose results recv() has not returned yet: call recv() until "
                "it returned them all, or reset() (which drops them)."
            )
        if self.errors:
            raise RuntimeError(
                f"{self.owner}.{method}() cannot run while sub-envs {_short(self._unreported())} "
                "have failures in steps sent with send() that recv() has not reported yet: call "
                "recv() until it raised them all, or reset() (which drops them)."
            )

    def _unreported(self) -> list[int]:
        """The sub-envs whose failure recv() has not raised yet, in order."""
        return sorted({rank for _, _, ids in self.errors for rank in ids.tolist()})

    def forget(self) -> None:
        """Drop every sent action, every result not handed out and every error not raised
        (``reset()``, ``close()``)."""
        self.in_flight[:] = False
        self.ready = deque()
        self.num_ready = 0
        self.errors = []
        self._taken = None

    def env_ids(self, env_ids: Any) -> IntArray:
        """The checked ``env_ids`` of ``send()`` (None: every sub-env) as an index array.

        Raises:
            TypeError: not a sequence of ints.
            ValueError: out of range, repeated, or already in flight.
        """
        if env_ids is None:
            ids = np.arange(self.num_envs, dtype=np.intp)
        else:
            given = np.asarray(env_ids)
            # Ints NumPy holds as floats or objects (around 2**63, beyond 64 bits): read exactly.
            array = (
                given
                if given.dtype.kind not in "fO"
                else exact_ints(env_ids.tolist() if isinstance(env_ids, np.ndarray) else env_ids)
            )
            if array is None or array.ndim != 1 or array.dtype.kind not in "iuO":
                raise TypeError(
                    f"env_ids must be a 1-D sequence of sub-env indices (ints), got {env_ids!r}."
                )
            # Checked before the cast to intp, which would wrap a value beyond it around.
            bad = array[(array < 0) | (array >= self.num_envs)]
            if bad.size:
                raise ValueError(
                    f"env_ids holds {int(bad[0])}, out of range for {self.num_envs} sub-envs."
                )
            ids = array.astype(np.intp)
            ordered = np.sort(ids)  # the send's size, not the VecEnv's
            if (ordered[1:] == ordered[:-1]).any():
                raise ValueError(f"env_ids names a sub-env twice: {ids.tolist()}.")
        if ids.size == 0:
            raise ValueError("env_ids is empty: send() needs at least one sub-env.")
        busy = ids[self.in_flight[ids]]
        if busy.size:
            raise ValueError(
                f"sub-envs {_short(busy.tolist())} already have an action in flight: send() a "
                "sub-env again only after recv() returned its result."
            )
        if self.errors:
            failed = np.intersect1d(ids, self._unreported())
            if failed.size:
                raise ValueError(
                    f"sub-envs {_short(failed.tolist())} have a failure recv() has not reported "
                    "yet: call recv() to receive it first."
                )
        return ids

    def post(self, send: Callable[[Callable[[IntArray], None]], None]) -> None:
        """Post the commands of a ``send()`` with Ctrl-C held: ``send(posted)`` hands each
        worker its command and calls ``posted(env_ids)`` once that command has reached it, so
        that exactly the sub-envs posted are in flight. A Ctrl-C meanwhile raises
        KeyboardInterrupt once they are recorded; one during a wait for room in a full pipe
        (``interruptible``) raises at once, with the commands posted so far recorded."""
        with holding_interrupts():
            send(self._posted)

    def _posted(self, env_ids: IntArray) -> None:
        self.in_flight[env_ids] = True

    def _check_waiting(self, size: int) -> None:
        """Raise RuntimeError when fewer than ``size`` sub-envs are in flight."""
        waiting = int(self.in_flight.sum())
        if waiting < size:
            raise RuntimeError(
                f"{self.owner}.recv() waits for {size} results but only {waiting} sub-envs have "
                "actions in flight: send() actions first, or pass a smaller batch_size."
            )

    def arrive(self, arrival: Arrival) -> None:
        """Take a decoded reply to ``send()``: its rows that succeeded wait for ``recv()``,
        its errors for ``collect()`` to raise; the sub-envs that failed (all of them when its
        ``entries`` is None) are no longer in flight."""
        env_ids, entries, errors = arrival.env_ids, arrival.reply.entries, arrival.reply.errors
        rows = _ranges(0, env_ids.size)[1]
        failed: IntArray | None = None
        chunk = None
        reported = []  # each error with the sub-envs it reports
        if entries is None or errors:  # only the rows that succeeded wait for recv()
            bad = {rank for rank, _ in errors}
            good = np.array([rank not in bad for rank in env_ids.tolist()], dtype=bool)
            if entries is None:
                good[:] = False
            failed = env_ids[~good]
            if good.any():
                chunk = Chunk.arrived(env_ids[good], rows[good], entries)
            # A reply lost whole: its sub-envs that no error names are reported by the first.
            unnamed = np.setdiff1d(failed, list(bad)) if entries is None else failed[:0]
            first = min(bad, default=None)
            for rank, error in errors:
                own = failed[failed == rank]
                reported.append((rank, error, np.union1d(own, unnamed) if rank == first else own))
        else:
            chunk = Chunk.arrived(env_ids, rows, entries)
        # Kept with no call in between, ending with the arrival itself: a KeyboardInterrupt
        # before the inbox drops it finds it taken (see collect()).
        if failed is not None:
            self.in_flight[failed] = False
        self.errors += reported
        if chunk is not None:
            self.ready += (chunk,)
            self.num_ready += chunk.env_ids.size
        self._taken = arrival

    def collect(self, inbox: Inbox) -> None:
        """Take every reply the inbox keeps, then raise the lowest sub-env's error not raised
        yet (its other rows stay for ``recv()``). The errors of other failed sub-envs wait for
        the next calls, one each: those sub-envs are no longer in flight, and each must be
        reported to be sent again."""
        while (arrival := inbox.first()) is not None:
            if arrival is not self._taken:  # else taken already: interrupted before the drop
                self.arrive(arrival)
            inbox.drop()
        if self.errors:
            first = min(self.errors, key=operator.itemgetter(0))
            self.errors = [entry for entry in self.errors if entry is not first]
            raise first[1]

    def receive(
        self,
        vec: VecEnv,
        batch_size: Any,
        inbox: Inbox,
        timeout: float | None,
        take: Take | None,
    ) -> VecRecvResult[Any]:
        """``recv()``: wait for the first ``batch_size`` rows and hand them out.

        Args:
            vec: the VecEnv.
            batch_size: the asked size (None: the default).
            inbox: the pool that keeps the replies to ``send()``.
            timeout: how long the inbox waits for a reply (see ``Inbox.wait``).
            take: as for ``join``.

        Raises:
            RuntimeError: fewer sub-envs in flight than ``batch_size``.
            VecEnvWorkerError: the lowest sub-env's error among the replies taken together
                (their other rows stay for the next ``recv()``).
        """
        size = self._size(batch_size, "batch_size", self.batch_size)
        self.collect(inbox)  # first: errors of replies an interrupted recv() took are raised
        self._check_waiting(size)
        while self.num_ready < size:
            inbox.wait(timeout, "step")
            self.collect(inbox)
        return self.hand_out(vec, size, take)

    def hand_out(self, vec: VecEnv, size: int, take: Take | None) -> VecRecvResult[Any]:
        """``recv()``'s result: the first ``size`` rows that arrived (no longer in flight).

        The result is built before anything changes, so an interrupt while it is built (a
        copy, a stack) leaves the rows to the next ``recv()``.
        """
        chunks, rest = self._first(size)
        observations, rewards, terminated, truncated, infos = join(chunks, take, vec._stack, False)
        env_ids = np.concatenate([chunk.env_ids for chunk in chunks])
        lazy: Any = infos  # a LazyInfos: the result builds the list when it is read
        result = VecRecvResult(observations, rewards, terminated, truncated, lazy, env_ids)
        vec._record_subset(env_ids, terminated | truncated, result)  # the same if run again
        # Handed out with no call in between (see the module's docstring).
        self.in_flight[env_ids] = False
        self.ready = rest
        self.num_ready -= size
        return result

    def _first(self, count: int) -> tuple[list[Chunk], deque[Chunk]]:
        """The chunks of the first ``count`` rows that arrived and the chunks left after them
        (``ready`` itself is left as it is)."""
        rest = deque(self.ready)  # a chunk per reply: a few
        taken: list[Chunk] = []
        while count:
            chunk = rest.popleft()
            if chunk.env_ids.size > count:
                chunk, tail = chunk.split(count)
                rest.appendleft(tail)
            taken.append(chunk)
            count -= chunk.env_ids.size
        return taken, rest


class ActionRows:
    """Sub-env ``rank``'s action as ``batch[rank]`` (``ids``: the rank of each row), to name
    the sub-env whose action cannot be pickled without splitting the batch beforehand."""

    def __init__(self, checker: ActionChecker, batch: Any, ids: Any = None) -> None:
        self._row = checker.row
        self._batch = batch
        self._rows = None if ids is None else {rank: row for row, rank in enumerate(ids.tolist())}

    def __getitem__(self, rank: int) -> Any:
        row = rank if self._rows is None else self._rows.get(rank)
        return None if row is None else self._row(self._batch, row)  # None: not sent


def first_error(errors: Iterable[tuple[int, VecEnvWorkerError]]) -> VecEnvWorkerError | None:
    """The error of the lowest sub-env (rule 9), or None."""
    first = min(errors, key=operator.itemgetter(0), default=None)
    return None if first is None else first[1]


def raise_first(errors: Iterable[tuple[int, VecEnvWorkerError]]) -> None:
    """Raise the error of the lowest sub-env, if any (rule 9)."""
    error = first_error(errors)
    if error is not None:
        raise error


def _short(ids: list[int]) -> str:
    return str(ids) if len(ids) <= 8 else f"{ids[:8]} and {len(ids) - 8} more"
