"""Helpers shared by the out-of-process backends (proc workers, Ray actors): building a slice
of sub-envs, stepping it into one batched reply, and the reply a worker sends for each command."""

from __future__ import annotations

import io
import math
import pickle
import threading
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Final, NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from sekai.error import VecEnvWorkerError
from sekai.spaces import Space
from sekai.spaces._kinds import ARRAY_SPACES as _ARRAY_SPACES
from sekai.vector._contract.batching import slice_rows
from sekai.vector._contract.errors import (
    ErrorInfo,
    describe,
    dumps,
    unpicklable_detail,
    worker_error,
)
from sekai.vector._contract.subenv import CheckedSubEnv, run_each
from sekai.vector._in_process import (
    build_envs,
    check_same_spaces,
    close_quietly,
    same_spaces,
)
from sekai.vector._packing import defer, pack, plain, unpack

__all__ = [
    "Errors",
    "Items",
    "Reply",
    "SliceStep",
    "build_slice",
    "check_slice_spaces",
    "checked_timeout",
    "decode_actions",
    "encode_reply",
    "encode_slices",
    "pickle_factories",
    "raw_slices",
    "read_reply",
    "receive_step",
    "run_call",
    "run_get",
    "run_set",
    "run_some",
    "run_step",
    "sendable",
    "step_entries",
    "step_slice",
]

Errors = list[tuple[int, ErrorInfo]]


class Items(Protocol):
    """Per-sub-env items, indexed by sub-env (a list, or rows read from a batch on demand)."""

    def __getitem__(self, rank: int, /) -> Any: ...


class Reply(NamedTuple):
    """One worker's (or actor's) answer, as ``read_reply`` reads it: its entries (or None) and
    the errors as (sub-env, exception)."""

    entries: Any
    errors: list[tuple[int, VecEnvWorkerError]]


# The first byte of a bare reply (``encode_reply``); a pickle's is PROTO (0x80).
BARE: Final = b"\x00"

# Longer than any wait the platform can time (about 292 years): no limit.
_NO_LIMIT: Final = threading.TIMEOUT_MAX


def checked_timeout(name: str, value: Any, *, optional: bool = True) -> float | None:
    """The timeout argument ``name`` in seconds, None for no limit, as every backend reads it.

    ``inf`` (or any value the platform cannot time) means no limit; so does None where the
    argument is ``optional``, which also refuses 0.

    Raises:
        TypeError: not a number (or None where ``optional``).
        ValueError: negative, NaN, or 0 where ``optional``.
    """
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        expected = "a number of seconds or None" if optional else "a number of seconds"
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}.")
    if optional and not value > 0:  # NaN included
        raise ValueError(f"{name} must be > 0 seconds (or None for no limit), got {value!r}.")
    if not value >= 0:
        raise ValueError(f"{name} must be >= 0 seconds, got {value!r}.")
    return None if value >= _NO_LIMIT else float(value)


def pickle_factories(
    cloudpickle: ModuleType, fns: Sequence[Any], lo: int, hi: int, owner: str, to: str
) -> bytes:
    """The factories ``fns[lo:hi]`` of one worker, for ``build_slice``: their count, then each
    factory, pickled one after another by one pickler, whose memo they share, so that what
    they share travels once, while the worker unpickles them, and names a failing one, one by
    one.

    Args:
        cloudpickle: the cloudpickle module to pickle with (its ``Pickler`` and ``dumps``).
        fns: every env factory of the VecEnv.
        lo, hi: the worker's sub-envs.
        owner: the backend's class name, for messages.
        to: where the factories go, for messages (``"a worker process"``).

    Raises:
        TypeError: a factory cannot be pickled, naming it (``env_fns[i]``).
    """
    buffer = io.BytesIO()
    pickler = cloudpickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dump(hi - lo)
    for index in range(lo, hi):
        try:
            pickler.dump(fns[index])
        except Exception as exc:
            detail = unpicklable_detail(fns[index], cloudpickle.dumps)
            raise TypeError(
                f"{owner}: env_fns[{index}]{detail} cannot be sent to {to}: it cannot be "
                f"pickled with cloudpickle ({type(exc).__name__}: {exc})."
            ) from exc
    return buffer.getvalue()


def _unpickle_factories(payload: bytes) -> tuple[list[Any], Errors]:
    """The factories ``pickle_factories`` pickled, and the error of the first that cannot be
    unpickled (by its index in the slice: the others after it are not read)."""
    reader = pickle.Unpickler(io.BytesIO(payload))
    try:
        count = reader.load()
    except Exception as exc:
        return [], [(0, describe(exc, "the env factories cannot be unpickled"))]
    fns: list[Any] = []
    for index in range(count):
        try:
            fns.append(reader.load())
        except Exception as exc:  # e.g. a module missing on this node
            return fns, [(index, describe(exc, "the env factory cannot be unpickled"))]
    return fns, []


def build_slice(
    payload: bytes, autoreset: bool, first: int, owner: str
) -> tuple[list[CheckedSubEnv] | None, Any, Errors]:
    """Build one worker's slice of sub-envs from cloudpickled factories.

    Args:
        payload: the env factories of this slice, as ``pickle_factories`` pickled them.
        autoreset: whether the sub-envs reset themselves when an episode ends.
        first: the index of the slice's first sub-env in the whole VecEnv (for messages).
        owner: the backend's class name, for messages.

    Returns:
        ``(subs, ready, errors)``: the CheckedSubEnv objects and ``(spaces, metadata,
        [resets_itself, ...])`` on success (``spaces``: what :func:`check_slice_spaces` reads);
        ``(None, None, errors)`` naming the slice-relative index of the sub-env whose factory
        failed otherwise (the sub-envs already built are closed).
    """
    fns, errors = _unpickle_factories(payload)
    if errors:
        return None, None, errors
    envs: list[Any] = []
    for index, fn in enumerate(fns):
        try:  # one at a time, to name the sub-env whose factory failed
            envs.append(build_envs([fn], owner, first_index=first + index, built=envs)[0])
        except Exception as exc:
            close_quietly(envs)
            return None, None, [(index, describe(exc))]
    subs = [CheckedSubEnv(env, autoreset, first + i) for i, env in enumerate(envs)]
    head = envs[0]
    metadata = head.metadata
    try:
        dumps(metadata)
    except Exception:  # metadata is informative: do not fail the whole VecEnv on it
        metadata = {}
    resets = [sub.resets_itself for sub in subs]
    return subs, (_distinct_spaces(envs), metadata, resets), []


def _distinct_spaces(envs: list[Any]) -> list[tuple[int, tuple[Space[Any], Space[Any]]]]:
    """The slice's first spaces and each sub-env's that differ from them, by slice index: all
    the parent needs to compare every sub-env with sub-env 0 (in another worker)."""
    head = (envs[0].observation_space, envs[0].action_space)
    out = [(0, head)]
    for index, env in enumerate(envs[1:], start=1):
        spaces = (env.observation_space, env.action_space)
        if not same_spaces(spaces, head):
            out.append((index, spaces))
    return out


def check_slice_spaces(
    owner: str, readies: Iterable[tuple[int, Any]]
) -> tuple[Space[Any], Space[Any]]:
    """Compare every sub-env's spaces with sub-env 0's, in order, as ``SyncVecEnv`` does.

    Args:
        owner: the backend's class name, for messages.
        readies: ``(first index, ready)`` per slice, ``ready`` as :func:`build_slice` returns it.

    Returns:
        Sub-env 0's ``(observation_space, action_space)``.

    Raises:
        ValueError: naming the first sub-env whose spaces differ from sub-env 0's.
    """
    first: tuple[Space[Any], Space[Any]] | None = None
    for lo, ready in readies:
        for offset, spaces in ready[0]:
            if first is None:
                first = spaces
            else:
                check_same_spaces(owner, lo + offset, spaces, first)
    assert first is not None, "no slice reported its spaces"
    return first


def encode_reply(command: str, entries: Any, errors: Errors) -> bytes:
    """A worker's pickled ``(entries, errors)`` reply to ``command``.

    ``entries`` holds one result per sub-env of the slice (a list), or one value for the whole
    slice. Without errors a list is packed column by column (``sekai.vector._packing``). An
    entry that cannot be pickled becomes its sub-env's error, so the others still arrive.

    The usual STEP reply, ``(deferred infos, None)`` (the rest is in shared memory) without
    errors, travels bare: ``BARE`` then the infos' bytes, with nothing to unpickle around them.
    """
    if not errors and type(entries) is tuple and len(entries) == 2:
        infos, arrays = entries
        if arrays is None and type(infos) is bytes:
            return BARE + infos
    try:
        if not errors and type(entries) is list:
            return dumps((pack(entries), None))
        return dumps((entries, errors or None))
    except Exception as exc:
        failure: Exception = exc
    errors = list(errors)
    if isinstance(entries, list):
        entries = list(entries)
        for index, entry in enumerate(entries):
            try:
                dumps(entry)
            except Exception as exc:
                entries[index] = None
                what = f"the result of {command}() cannot be sent to the parent"
                errors.append((index, describe(exc, what)))
        errors.sort(key=lambda item: item[0])
    else:
        entries = None
        errors.append((0, describe(failure, "the reply cannot be sent to the parent")))
    try:
        return dumps((entries, errors))
    except Exception as exc:
        return dumps((None, [(0, describe(exc, "the reply cannot be pickled"))]))


def read_reply(
    body: Any, first: int, worker: int
) -> tuple[Any, list[tuple[int, VecEnvWorkerError]]]:
    """The parent's side of ``encode_reply``: ``(entries, errors)`` with each error as the
    ``VecEnvWorkerError`` of its sub-env (``first`` is the slice's first sub-env).

    Raises:
        Exception: whatever unpickling the reply raises (e.g. a class only the worker has).
    """
    if body[0] == 0:  # BARE
        return (bytes(body[1:]), None), []
    packed, infos = pickle.loads(body)
    errors = [
        (first + offset, worker_error(ErrorInfo(*info), first + offset, worker=worker))
        for offset, info in infos or ()
    ]
    return unpack(packed), errors


class SliceStep(NamedTuple):
    """The step of some sub-envs of one slice, stacked: one reply for all of them.

    Rows follow the stepped sub-envs; a sub-env that raised has reward 0, both flags False,
    info and observation None (its error is reported beside).
    """

    rewards: NDArray[np.float64]
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    infos: list[Any]
    observations: list[Any]


def receive_step(results: Sequence[Any]) -> SliceStep:
    """Stack the sub-envs' step results (None where a sub-env raised) into a ``SliceStep``.

    The one place where an out-of-process backend first receives what its sub-envs' steps
    returned (after ``SubEnv``'s autoreset or freezing).
    """
    n = len(results)
    rewards = np.zeros(n, dtype=np.float64)
    terminated = np.zeros(n, dtype=np.bool_)
    truncated = np.zeros(n, dtype=np.bool_)
    ok = [index for index, result in enumerate(results) if result is not None]
    if len(ok) == n:
        rewards[:] = [r.reward for r in results]
        terminated[:] = [r.terminated for r in results]
        truncated[:] = [r.truncated for r in results]
    else:
        for index in ok:
            result = results[index]
            rewards[index] = result.reward
            terminated[index] = result.terminated
            truncated[index] = result.truncated
    infos = [None if r is None else r.info for r in results]
    observations = [None if r is None else r.observation for r in results]
    return SliceStep(rewards, terminated, truncated, infos, observations)


def step_slice(
    subs: Sequence[CheckedSubEnv], positions: Sequence[int] | None, actions: Sequence[Any]
) -> tuple[SliceStep, Errors]:
    """Step ``subs[positions[i]]`` with ``actions[i]`` (every sub-env when ``positions`` is
    None), each under the contract (``SubEnv.step``: autoreset or freezing), a failing sub-env
    not stopping the others.

    Returns:
        The stacked step and the errors, each naming its sub-env's index in ``subs``.
    """
    results, errors = run_some(CheckedSubEnv.step, subs, positions, actions)
    return receive_step(results), errors


def run_some(
    fn: Callable[[CheckedSubEnv, Any], Any],
    subs: Sequence[CheckedSubEnv],
    positions: Sequence[int] | None,
    args: Sequence[Any],
) -> tuple[list[Any], Errors]:
    """``fn(subs[positions[i]], args[i])`` for each position (every sub-env when ``positions``
    is None), a failing sub-env not stopping the others.

    Returns:
        The results in the order of ``positions`` (None where ``fn`` raised) and the errors,
        each naming its sub-env's index in ``subs``.
    """
    chosen = subs if positions is None else [subs[p] for p in positions]
    results, failures = run_each(fn, chosen, args)
    errors = [
        (index if positions is None else positions[index], describe(exc)) for index, exc in failures
    ]
    return results, errors


def _in_slice(
    subs: Sequence[CheckedSubEnv], positions: Sequence[int] | None, results: list[Any]
) -> list[Any]:
    """Results in the order of ``positions`` as a reply's entries: one per sub-env of the slice
    (None for those not asked), so that an entry that cannot travel names its sub-env."""
    if positions is None:
        return results
    entries: list[Any] = [None] * len(subs)
    for position, result in zip(positions, results):
        entries[position] = result
    return entries


def run_get(
    subs: Sequence[CheckedSubEnv], argument: tuple[Sequence[int] | None, str]
) -> tuple[list[Any], Errors]:
    """A worker's get_attr command: ``argument`` is ``(positions or None: all, name)``."""
    positions, name = argument
    count = len(subs) if positions is None else len(positions)
    results, errors = run_some(lambda sub, _: sub.get_attr(name), subs, positions, [None] * count)
    return _in_slice(subs, positions, results), errors


def run_set(
    subs: Sequence[CheckedSubEnv],
    argument: tuple[Sequence[int] | None, str, Sequence[Any], bool],
) -> tuple[None, Errors]:
    """A worker's set_attr command: ``argument`` is ``(positions or None: all, name, one value
    per position, whether to set them or only check them)``: nothing is set where a value fails
    its check (``SubEnv.check_set``)."""
    positions, name, values, apply = argument
    _, errors = run_some(lambda sub, value: sub.check_set(name, value), subs, positions, values)
    if apply and not errors:
        _, errors = run_some(lambda sub, value: sub.set_attr(name, value), subs, positions, values)
    return None, errors


def run_call(
    subs: Sequence[CheckedSubEnv],
    argument: tuple[Sequence[int] | None, str, tuple[Any, ...], dict[str, Any]],
) -> tuple[list[Any], Errors]:
    """A worker's call command: ``argument`` is ``(positions or None: all, name, args,
    kwargs)``."""
    positions, name, args, kwargs = argument
    count = len(subs) if positions is None else len(positions)
    results, errors = run_some(
        lambda sub, _: sub.call(name, args, kwargs), subs, positions, [None] * count
    )
    return _in_slice(subs, positions, results), errors


def sendable(
    stepped: SliceStep,
    positions: Sequence[int] | None,
    errors: Errors,
    command: str,
    *,
    observations: bool,
) -> None:
    """Make every row of ``stepped`` picklable: a sub-env whose info (or observation, when they
    travel pickled) is not becomes an error in ``errors`` (named by its index in the slice)
    and its row None; ``errors`` ends sorted by sub-env."""
    for row, info in enumerate(stepped.infos):
        if info is None:
            continue
        try:
            dumps((info, stepped.observations[row]) if observations else info)
        except Exception as exc:
            stepped.infos[row] = stepped.observations[row] = None
            what = f"the result of {command}() cannot be sent to the parent"
            errors.append((row if positions is None else positions[row], describe(exc, what)))
    errors.sort(key=lambda item: item[0])


def run_step(
    subs: Sequence[CheckedSubEnv],
    split: Callable[[Any], list[Any]],
    space: Space[Any],
    argument: tuple[list[int] | None, Any],
) -> tuple[SliceStep, Errors]:
    """A worker's STEP command: ``argument`` is ``(positions or None, encoded actions)`` (see
    ``sekai.vector._batches``); ``split`` cuts the decoded batch into per-sub-env actions."""
    positions, actions = argument
    return step_slice(subs, positions, split(decode_actions(space, actions)))


def step_entries(
    stepped: SliceStep, positions: Sequence[int] | None, errors: Errors, *, arrays: bool
) -> tuple[Any, Any]:
    """The entries of a STEP reply: ``(packed infos, arrays)``; ``arrays`` is ``(rewards,
    terminated, truncated, packed observations)``, or None when they are in shared memory.
    Plain infos are deferred: the parent unpickles them only if they are read.

    The columns are pickled (or checked to pickle) as a whole; only when one does not is every
    row tried on its own (``sendable``), so the sub-envs whose rows cannot travel become errors
    in ``errors`` and the others still arrive.
    """
    try:
        return _entries(stepped, arrays=arrays)
    except Exception:  # pickling raises anything: the rows that cannot travel are found below
        sendable(stepped, positions, errors, "step", observations=arrays)
        return _entries(stepped, arrays=arrays)


def _entries(stepped: SliceStep, *, arrays: bool) -> tuple[Any, Any]:
    infos = defer(pack(stepped.infos))
    if type(infos) is not bytes:
        infos = _Pickled(dumps(infos))  # raises when it cannot travel
    if not arrays:
        return infos, None
    observations = pack(stepped.observations)
    if not plain(observations):
        observations = _Pickled(dumps(observations))
    return infos, (stepped.rewards, stepped.terminated, stepped.truncated, observations)


class _Pickled:
    """A column the worker pickled once to find out that it travels, travelling as those
    bytes: the reply's unpickling in the parent unpickles it too, so it arrives as the column
    itself and a failure fails the call that received it, as for any other part of a reply."""

    __slots__ = ("blob",)

    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    def __reduce__(self) -> tuple[Any, ...]:
        return (pickle.loads, (self.blob,))


def encode_slices(space: Space[Any], batch: Any, slices: Sequence[tuple[int, int]]) -> list[Any]:
    """The rows ``lo:hi`` of a checked batch of actions, for each of ``slices``, as they travel:
    for an array space, the array's dtype, row shape and raw bytes (far cheaper to pickle than
    the array; the batch is converted to bytes once and each slice's bytes cut from those);
    the rows themselves otherwise."""
    raw = raw_slices(space, batch, slices)
    if raw is not None:
        dtype, shape, cuts = raw
        return [(dtype, shape, cut) for cut in cuts]
    return [slice_rows(space, batch, lo, hi) for lo, hi in slices]


def raw_slices(
    space: Space[Any], batch: Any, slices: Sequence[tuple[int, int]]
) -> tuple[str, tuple[int, ...], list[bytes]] | None:
    """``(dtype, row shape, bytes of each slice)`` of a batch that travels as raw bytes (an
    array space's; the batch converted to bytes once), else None."""
    if not _raw(space, batch):
        return None
    array = np.ascontiguousarray(batch)  # its own dtype: the env gets what step() gives
    raw, shape = array.tobytes(), array.shape[1:]
    row = array.itemsize * math.prod(shape)
    return array.dtype.str, shape, [raw[lo * row : hi * row] for lo, hi in slices]


def _raw(space: Space[Any], batch: Any) -> bool:
    """Whether ``batch`` travels as raw bytes (not rows of no element: bytes cannot count
    them)."""
    return (
        isinstance(space, _ARRAY_SPACES)
        and isinstance(batch, np.ndarray)
        and not batch.dtype.hasobject
        and math.prod(batch.shape[1:]) > 0
    )


def decode_actions(space: Space[Any], data: Any) -> Any:
    """A batch ``encode_slices`` encoded (a writable array for an array space)."""
    if isinstance(space, _ARRAY_SPACES) and type(data) is tuple:
        dtype, shape, raw = data
        return np.frombuffer(bytearray(raw), dtype=np.dtype(dtype)).reshape(-1, *shape)
    return data
