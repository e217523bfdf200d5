"""Helpers shared by the out-of-process backends (proc workers, Ray actors): building a slice
of sub-envs, and the reply a worker sends for each command."""

from __future__ import annotations

import pickle
from typing import Any

from sekai.error import VecEnvWorkerError
from sekai.vector._contract.errors import ErrorInfo, describe, dumps, worker_error
from sekai.vector._contract.subenv import CheckedSubEnv
from sekai.vector._in_process import build_envs, check_same_spaces, close_quietly, env_factories
from sekai.vector._packing import pack, unpack

__all__ = ["Errors", "build_slice", "encode_reply", "read_reply"]

Errors = list[tuple[int, ErrorInfo]]


def build_slice(
    payload: bytes, autoreset: bool, first: int, owner: str
) -> tuple[list[CheckedSubEnv] | None, Any, Errors]:
    """Build one worker's slice of sub-envs from cloudpickled factories.

    Args:
        payload: the pickled list of env factories of this slice.
        autoreset: whether the sub-envs reset themselves when an episode ends.
        first: the index of the slice's first sub-env in the whole VecEnv (for messages).
        owner: the backend's class name, for messages.

    Returns:
        ``(subs, ready, errors)``: the CheckedSubEnv objects and ``(observation_space, action_space,
        metadata, [resets_itself, ...])`` on success; ``(None, None, errors)`` naming the
        slice-relative index of the sub-env whose factory failed otherwise (the sub-envs already
        built are closed).
    """
    try:
        fns = env_factories(pickle.loads(payload), owner)
    except Exception as exc:
        return None, None, [(0, describe(exc, "the env factories cannot be unpickled"))]
    envs: list[Any] = []
    for index, fn in enumerate(fns):
        try:  # one at a time, to name the sub-env whose factory failed
            env = build_envs([fn], owner, first_index=first + index)[0]
            envs.append(env)
            check_same_spaces(
                owner,
                first + index,
                (env.observation_space, env.action_space),
                (envs[0].observation_space, envs[0].action_space),
                first,
            )
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
    return subs, (head.observation_space, head.action_space, metadata, resets), []


def encode_reply(command: str, entries: Any, errors: Errors) -> bytes:
    """A worker's pickled ``(entries, errors)`` reply to ``command``.

    ``entries`` holds one result per sub-env of the slice (a list), or one value for the whole
    slice. Without errors a list is packed column by column (``sekai.vector._packing``). An
    entry that cannot be pickled becomes its sub-env's error, so the others still arrive.
    """
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
    packed, infos = pickle.loads(body)
    errors = [
        (first + offset, worker_error(ErrorInfo(*info), first + offset, worker=worker))
        for offset, info in infos or ()
    ]
    return unpack(packed), errors
