"""Worker-side helpers shared by the out-of-process backends (proc workers, Ray actors)."""

from __future__ import annotations

import pickle
from typing import Any

from sekai.vector._contract.errors import ErrorInfo, describe, dumps
from sekai.vector._contract.subenv import SubEnv
from sekai.vector._in_process import build_envs, check_same_spaces, close_quietly, env_factories

__all__ = ["Errors", "build_slice"]

Errors = list[tuple[int, ErrorInfo]]


def build_slice(
    payload: bytes, autoreset: bool, first: int, owner: str
) -> tuple[list[SubEnv] | None, Any, Errors]:
    """Build one worker's slice of sub-envs from cloudpickled factories.

    Args:
        payload: the pickled list of env factories of this slice.
        autoreset: whether the sub-envs reset themselves when an episode ends.
        first: the index of the slice's first sub-env in the whole VecEnv (for messages).
        owner: the backend's class name, for messages.

    Returns:
        ``(subs, ready, errors)``: the SubEnv objects and ``(observation_space, action_space,
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
    subs = [SubEnv(env, autoreset) for env in envs]
    head = envs[0]
    metadata = head.metadata
    try:
        dumps(metadata)
    except Exception:  # metadata is informative: do not fail the whole VecEnv on it
        metadata = {}
    resets = [sub.resets_itself for sub in subs]
    return subs, (head.observation_space, head.action_space, metadata, resets), []
