"""The body of one RayVecEnv worker actor: a slice of the sub-envs, each driven by a ``SubEnv``.

Autoreset, freezing and attribute access are ``SubEnv``'s, the code SyncVecEnv and ProcVecEnv
workers run; each method runs its command on every sub-env of the slice, or on those the
command names (``run_each``: a failing sub-env does not stop the others), and replies with bytes
the parent unpickles: ``(entries, errors)``, one entry per sub-env (None where it failed;
``step`` replies one entry for all the sub-envs it stepped, stacked) and ``errors`` None or a
list of ``(local index, ErrorInfo)``. Exceptions never escape a method, so Ray reports only what
Ray itself suffers (a dead actor) and the parent names the sub-env for everything else; a
BaseException that is not an Exception cuts the command short and escapes as ``CutShort``, for
which the parent stops the actor.

This module imports no Ray: Ray makes the actor with ``ray.remote(RayWorker)`` in the parent.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from sekai.vector._contract.actions import ActionChecker
from sekai.vector._contract.errors import describe, unreadable_command
from sekai.vector._contract.subenv import CheckedSubEnv, run_each
from sekai.vector._remote import (
    Errors,
    build_slice,
    encode_reply,
    run_call,
    run_get,
    run_set,
    run_step,
    step_entries,
)

__all__ = ["OWNER", "CutShort", "RayWorker"]

OWNER = "RayVecEnv"


class CutShort(Exception):
    """A command cut short by a BaseException that is not an Exception (KeyboardInterrupt, a
    CancelledError, ...), by its class name and message (Ray would report a KeyboardInterrupt
    as a cancelled task)."""

    def __init__(self, exc_type: str, message: str) -> None:
        super().__init__(exc_type, message)
        self.exc_type = exc_type
        self.message = message


def _failures(failures: list[tuple[int, Exception]]) -> Errors:
    return [(index, describe(exc)) for index, exc in failures]


class RayWorker:
    """The sub-envs of one worker actor and its commands (each returns the encoded reply)."""

    def __init__(self) -> None:
        self.subs: list[CheckedSubEnv] = []
        self.action_space: Any = None
        self.split: Callable[[Any], list[Any]] = list

    def _reply(
        self,
        what: str,
        command: Callable[[Any], tuple[Any, Errors]],
        payload: bytes | None = None,
        *,
        positioned: bool = True,
    ) -> bytes:
        """Run ``command`` with the unpickled ``payload`` (None: no argument) and encode its
        reply; an argument that cannot be unpickled fails the sub-envs it was for (its
        positions when ``positioned``, else all)."""
        try:
            argument = None if payload is None else pickle.loads(payload)
        except Exception as exc:  # e.g. a class this node cannot import
            count = len(self.subs)
            errors = unreadable_command(payload, exc, what, count, positioned=positioned)
            return encode_reply(what, None, errors)
        try:
            entries, errors = command(argument)
        except Exception as exc:  # a command that cannot even start: the slice's first fails
            entries, errors = None, [(0, describe(exc))]
        except SystemExit:  # how Ray ends an actor (ray.actor.exit_actor())
            raise
        except BaseException as exc:
            raise CutShort(type(exc).__name__, str(exc)) from exc
        return encode_reply(what, entries, errors)

    # -- commands ----------------------------------------------------------------------------

    def init(self, payload: bytes, autoreset: bool, first: int) -> bytes:
        """Build the slice's sub-envs from cloudpickled factories; sub-env ``first`` is the
        first. Entries: ``(observation_space, action_space, metadata, [resets_itself])``."""
        return self._reply("init", lambda _: self._init(payload, autoreset, first))

    def _init(self, payload: bytes, autoreset: bool, first: int) -> tuple[Any, Errors]:
        subs, ready, errors = build_slice(payload, autoreset, first, OWNER)
        if subs is not None:
            self.subs = subs
            self.action_space = subs[0].env.action_space
            self.split = ActionChecker(self.action_space, len(subs)).split
        return ready, errors

    def reset(self, payload: bytes) -> bytes:
        """Reset each sub-env with its pickled ``(seed, options)``.
        Entries: ``(observation, info)``."""

        def command(plans: Any) -> tuple[Any, Errors]:
            results, failures = run_each(lambda sub, plan: sub.reset(*plan), self.subs, plans)
            entries = [None if r is None else (r.observation, r.info) for r in results]
            return entries, _failures(failures)

        return self._reply("reset", command, payload, positioned=False)

    def step(self, payload: bytes) -> bytes:
        """Step some sub-envs with their actions (autoreset or freezing by ``SubEnv``): the
        pickled ``(positions, encoded actions)`` of ``sekai.vector._batches`` (positions None:
        every sub-env). One entry for all of them: ``(packed infos, (rewards, terminated,
        truncated, packed observations))``, rows in the order of the positions."""

        def command(argument: Any) -> tuple[Any, Errors]:
            stepped, errors = run_step(self.subs, self.split, self.action_space, argument)
            return step_entries(stepped, argument[0], errors, arrays=True), errors

        return self._reply("step", command, payload)

    def get_attr(self, payload: bytes) -> bytes:
        """Read an attribute of some sub-envs (through their wrapper stacks): the pickled
        ``(positions or None: all, name)``. Entries: one per sub-env, None where not asked."""
        return self._reply("get_attr", lambda argument: run_get(self.subs, argument), payload)

    def set_attr(self, payload: bytes) -> bytes:
        """Set an attribute of some sub-envs: the pickled ``(positions or None: all, name, one
        value per position, False to only check the values)``."""
        return self._reply("set_attr", lambda argument: run_set(self.subs, argument), payload)

    def call(self, payload: bytes) -> bytes:
        """Call a method of some sub-envs (or read it when it is not callable): the pickled
        ``(positions or None: all, name, args, kwargs)``. Entries as for ``get_attr``."""
        return self._reply("call", lambda argument: run_call(self.subs, argument), payload)

    def close(self) -> bytes:
        """Close every sub-env of the slice."""

        def command(argument: None) -> tuple[Any, Errors]:
            _, failures = run_each(lambda sub, _: sub.close(), self.subs, self.subs)
            self.subs = []
            return None, _failures(failures)

        return self._reply("close", command)
