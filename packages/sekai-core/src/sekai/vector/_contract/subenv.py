"""One sub-env under the vector contract: same-step autoreset, freezing and attribute access.

This is the per-sub-env half of the contract. It runs wherever the sub-env lives: in the
parent for SyncVecEnv and AsyncVecEnv, in the worker process for ProcVecEnv (and the actor for
RayVecEnv). Its sync and async drivers share every decision through the helpers below.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from sekai._slots import Slotted
from sekai.core._async import awaitable
from sekai.core._autoreset import autoreset_result, keep_ending, reset_inside
from sekai.core._snapshot import snapshot
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import attribute_layer
from sekai.error import _noted
from sekai.vector._contract.checks import ResultCheck, checked_result
from sekai.wrappers.time_limit import TimeLimit, checked_steps

__all__ = [
    "CheckedSubEnv",
    "SubEnv",
    "call_attribute",
    "call_each",
    "resets_itself",
    "run_each",
]

T = TypeVar("T")
R = TypeVar("R")


def call_attribute(
    name: str, attr: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None
) -> Any:
    """``VecEnv.call``'s rule: call ``attr`` (attribute ``name``) with the arguments, or return
    it when it is not callable; arguments for an attribute that is not callable are refused
    rather than dropped."""
    if callable(attr):
        return attr(*args, **(kwargs or {}))
    if args or kwargs:
        raise TypeError(
            f"call({name!r}, ...) got arguments, but {name!r} is a {type(attr).__name__}, not "
            f"a method; read it with get_attr({name!r})."
        )
    return attr


def resets_itself(env: Env[Any, Any]) -> bool:
    """Whether a layer of ``env``'s wrapper stack is an ``AutoReset``: then a step whose
    episode that AutoReset ended and reset is passed on as it is, never reset a second time nor
    frozen, and only the other ends (a TimeLimit around it) are reset or frozen
    (``reset_inside``)."""
    from sekai.wrappers.autoreset import contains_autoreset  # wrappers may import vector helpers

    return contains_autoreset(env)


# The attributes SubEnv.check_set knows a rule of: only these cost a backend a check first.
CHECKED_NAMES = frozenset({"max_episode_steps"})


class SubEnv(Slotted):
    """Drives one sub-env the way every VecEnv backend must.

    - ``autoreset=True``: a step that ends an episode resets the sub-env within the same call;
      the result has the new episode's first observation, the ending step's reward and flags,
      and info ``{**info, "final_observation", "final_info", "reset_info"}``. The terminal
      observation and info are copied before the reset, so an env that writes its reset
      observation into the same buffer (gymnasium#1132), or refills the same info dict, does
      not change ``final_observation`` or ``final_info``.
    - ``autoreset=False``: the sub-env freezes: until the next ``reset()`` every step returns
      its final observation (kept as a copy; each step's batch copies it again, see
      ``InProcessVecEnv``, or pickles it), reward 0, the flags it ended with and a new empty
      info, without stepping it (its action is ignored).
    - A step that an ``AutoReset`` inside the sub-env already reset (its info holds
      ``final_observation``) is passed on as it is: never reset a second time, never frozen.
      Any other step that ends an episode, also one of a sub-env with an AutoReset inside (a
      TimeLimit around it ended the episode), is reset or frozen as above: the AutoReset
      wrapper's own rule (``reset_inside``).

    Every result the sub-env returns, an autoreset's included, must be a ``ResetResult`` /
    ``StepResult`` whose info is a Mapping, which becomes a plain dict (``checked_result``);
    anything else is a ``TypeError`` naming the sub-env. Observations are checked where they
    are first batched: by the parent's stacker for in-process backends (then, for a batch that
    does not fit, by ``checked_steps``), by ``CheckedSubEnv`` in a worker.

    Attributes:
        env: the sub-env.
        autoreset: the VecEnv's autoreset setting.
        index: the sub-env's index in the whole VecEnv (for messages).
        resets_itself: whether a layer of the sub-env is an ``AutoReset``.
        built: where the driver appends ``index`` for each autoreset result it builds (None:
            nowhere): that info is sekai's own dict of snapshots, which the VecEnv's batch of
            infos hands on as it is (``snapshot_infos``).
    """

    __slots__ = ("_final", "autoreset", "built", "env", "index", "resets_itself", "stepped")

    def __init__(
        self,
        env: Env[Any, Any],
        autoreset: bool,
        index: int,
        built: list[int] | None = None,
    ) -> None:
        self.env = env
        self.built = built
        self.autoreset = bool(autoreset)
        self.index = index
        self.resets_itself = resets_itself(env)
        self._final: StepResult[Any] | None = None
        # The env step of an async_step (its StepResult), for the VecEnv's bookkeeping when
        # the call is cancelled before it returns: the VecEnv sets it to None before each call
        # (a call cancelled before it starts never runs), async_step sets it once the env has
        # stepped.
        self.stepped: StepResult[Any] | None = None

    @property
    def frozen(self) -> bool:
        """Whether the sub-env finished an episode with ``autoreset=False`` and awaits reset()."""
        return self._final is not None

    # -- decisions shared by both drivers ---------------------------------------------------

    def _frozen_result(self) -> StepResult[Any]:
        final = self._final
        assert final is not None
        # The batch of every backend copies the observation (stacked or pickled), so a caller's
        # in-place edit of one step's does not reach the next step's.
        return StepResult(final.observation, 0.0, final.terminated, final.truncated, {})

    def _needs_reset(self, result: StepResult[Any]) -> bool:
        """After a step: True when the VecEnv must reset the sub-env now (freezes it instead
        when autoreset is off, keeping a copy of the final observation: the step hands the
        env's own arrays on)."""
        if not (result.terminated or result.truncated) or reset_inside(
            self.resets_itself, result.info
        ):
            return False
        if self.autoreset:
            return True
        self._final = StepResult(
            snapshot(result.observation), result.reward, result.terminated, result.truncated, {}
        )
        return False

    # -- sync driver -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset the sub-env (unfreezing it) and return its ResetResult."""
        self._final = None
        return self._reset_result(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> StepResult[Any]:
        """Step the sub-env under the contract (autoreset or freezing)."""
        if self._final is not None:
            return self._frozen_result()
        result = self.env.step(action)
        if type(result) is not StepResult or type(result.info) is not dict:  # else: it is fine
            result = checked_result(result, StepResult, self.index, "step")
        if (result.terminated or result.truncated) and self._needs_reset(result):
            kept = keep_ending(result)
            try:
                reset = self.env.reset()
            except Exception as exc:
                _note_autoreset(exc, self.index)
                raise  # the env's own exception, its cause and traceback kept
            result = autoreset_result(result, kept, self._reset_result(reset))
            if self.built is not None:
                self.built.append(self.index)
        return result

    def _reset_result(self, result: Any) -> ResetResult[Any]:
        return checked_result(result, ResetResult, self.index, "reset")

    # -- async driver ------------------------------------------------------------------------

    async def async_reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Any:
        """``reset()`` through the sub-env's ``async_reset()``."""
        self._final = None
        reset = self.env.async_reset(seed=seed, options=options)
        return self._reset_result(await awaitable(reset, self.env, "async_reset", self.index))

    async def async_step(self, action: Any) -> StepResult[Any]:
        """``step()`` through the sub-env's ``async_step()`` / ``async_reset()``.

        A cancellation during the autoreset (a caller's timeout), also a repeated one, lets the
        reset finish before it propagates: a sub-env is never left with its episode ended and
        not reset.
        """
        if self._final is not None:
            return self._frozen_result()
        step = await awaitable(self.env.async_step(action), self.env, "async_step", self.index)
        result = checked_result(step, StepResult, self.index, "step")
        self.stepped = result
        if self._needs_reset(result):
            kept = keep_ending(result)
            try:
                reset = await _finished(
                    awaitable(self.env.async_reset(), self.env, "async_reset", self.index)
                )
            except Exception as exc:
                _note_autoreset(exc, self.index)
                raise  # the env's own exception, its cause and traceback kept
            result = autoreset_result(result, kept, self._reset_result(reset))
            if self.built is not None:
                self.built.append(self.index)
        return result

    # -- attributes through the wrapper stack -------------------------------------------------

    def get_attr(self, name: str) -> Any:
        """``name`` from the outermost layer of the sub-env that has it."""
        return self.env.get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the layer that has it (the outermost wrapper if none has)."""
        self.env.set_attr(name, value)

    def check_set(self, name: str, value: Any) -> None:
        """Raise what ``set_attr(name, value)`` would raise where the rule of the layer it
        reaches is known without setting it (a TimeLimit's ``max_episode_steps``), so that a
        backend checks every sub-env's value before it changes any."""
        if name in CHECKED_NAMES and isinstance(attribute_layer(self.env, name), TimeLimit):
            checked_steps(value)

    def call(
        self, name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        """Call method ``name`` (or read the attribute when it is not callable)."""
        return call_attribute(name, self.env.get_attr(name), args, kwargs)

    def close(self) -> None:
        """Close the sub-env."""
        self.env.close()


def _note_autoreset(error: Exception, index: int) -> None:
    """Note on ``error``, raised by sub-env ``index``'s reset in a same-step autoreset, that it
    was: the traceback alone shows step() failing, and the sub-env is left with its episode
    ended."""
    _noted(
        error,
        [
            f"raised by the same-step autoreset of sub-env {index}: its episode ended in this "
            "step and it was not reset; call reset() before stepping it again"
        ],
    )


async def _finished(coroutine: Any) -> Any:
    """Await ``coroutine`` to its end even when the awaiting task is cancelled meanwhile, once
    or more; the (first) cancellation is re-raised afterwards."""
    task = asyncio.ensure_future(coroutine)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            with contextlib.suppress(Exception):  # the task's own error: task.result() below
                await asyncio.shield(task)
        except asyncio.CancelledError as error:
            if not task.cancelled() and cancelled is None:  # the caller's: wait on (also one
                # that arrives as the task ends: asyncio code must not swallow a cancel())
                cancelled = error
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: its failure would hide the cancellation
        raise cancelled
    return task.result()


class CheckedSubEnv(SubEnv):
    """A ``SubEnv`` in a worker process or actor (ProcVecEnv, RayVecEnv): it checks every
    observation it returns (``ResultCheck``) before the worker batches it or writes it to
    shared memory, so a misfit is the error of its sub-env.

    Args:
        env: the sub-env.
        autoreset: the VecEnv's autoreset setting.
        index: the sub-env's index in the whole VecEnv (for messages).
    """

    __slots__ = ("_check",)

    def __init__(self, env: Env[Any, Any], autoreset: bool, index: int) -> None:
        super().__init__(env, autoreset, index)
        self._check = ResultCheck(env.observation_space, index)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        result = super().reset(seed, options)
        self._check.observation(result.observation, "reset")
        return result

    def step(self, action: Any) -> StepResult[Any]:
        return self._check.step(super().step(action))

    async def async_reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Any:
        result = await super().async_reset(seed, options)
        self._check.observation(result.observation, "reset")
        return result

    async def async_step(self, action: Any) -> StepResult[Any]:
        return self._check.step(await super().async_step(action))


def run_each(
    fn: Callable[[T, Any], R], items: Sequence[T], args: Sequence[Any]
) -> tuple[list[R | None], list[tuple[int, Exception]]]:
    """``fn(item, arg)`` for every pair, each running even after another raised (rule 9).

    Returns:
        The results (None where ``fn`` raised) and the ``(index, exception)`` of every failure,
        in index order. A ProcVecEnv worker reports each failure with its sub-env.
    """
    results: list[R | None] = [None] * len(items)
    errors: list[tuple[int, Exception]] = []
    for index, (item, arg) in enumerate(zip(items, args)):
        try:
            results[index] = fn(item, arg)
        except Exception as exc:  # reported after the others ran
            errors.append((index, exc))
    return results, errors


def call_each(
    fn: Callable[[T, Any], R],
    items: Sequence[T],
    args: Sequence[Any],
    ranks: Sequence[int] | None = None,
) -> list[R]:
    """``[fn(item, arg) ...]`` for every pair; after all ran, raise the error of the lowest
    sub-env (rule 9): ``ranks`` are the items' sub-env indices (None: their positions).

    So one failing sub-env does not leave the others halfway through a call.
    """
    results, errors = run_each(fn, items, args)
    if errors:
        rank = (lambda error: error[0]) if ranks is None else (lambda error: ranks[error[0]])
        raise min(errors, key=rank)[1]
    return results  # type: ignore[return-value]
