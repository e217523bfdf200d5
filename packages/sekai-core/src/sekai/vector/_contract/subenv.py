"""One sub-env under the vector contract: same-step autoreset, freezing and attribute access.

This is the per-sub-env half of the contract. It runs wherever the sub-env lives: in the
parent for SyncVecEnv and AsyncVecEnv, in the worker process for ProcVecEnv (and the actor for
RayVecEnv). Its sync and async drivers share every decision through the helpers below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.vector._contract.checks import ResultCheck, snapshot
from sekai.vector.infos import autoreset_info

__all__ = ["SubEnv", "call_each", "resets_itself", "run_each"]

_ndarray = np.ndarray

T = TypeVar("T")
R = TypeVar("R")


def resets_itself(env: Env[Any, Any]) -> bool:
    """Whether a layer of ``env``'s wrapper stack is an ``AutoReset`` (the VecEnv then never
    resets it a second time, and it never freezes)."""
    from sekai.wrappers.autoreset import AutoReset  # wrappers may import vector helpers

    return any(isinstance(layer, AutoReset) for layer in env)


class SubEnv:
    """Drives one sub-env the way every VecEnv backend must.

    - ``autoreset=True``: a step that ends an episode resets the sub-env within the same call;
      the result has the new episode's first observation, the ending step's reward and flags,
      and info ``{**info, "final_observation", "final_info", "reset_info"}``.
    - ``autoreset=False``: the sub-env freezes: until the next ``reset()`` every step returns
      its final observation, reward 0, the flags it ended with and a new empty info, without
      stepping it (its action is ignored).
    - A sub-env wrapped in ``AutoReset`` is never reset a second time and never freezes.
    - Every result is checked (``ResultCheck``) before it leaves: an observation that does not
      fit the space, a reward that is not a real number or a flag that is not a bool raises,
      naming ``index``; the terminal observation is copied before an autoreset, so an env that
      writes the reset observation into the same buffer does not change ``final_observation``.

    Attributes:
        env: the sub-env.
        autoreset: the VecEnv's autoreset setting.
        resets_itself: whether the sub-env is wrapped in ``AutoReset``.
        index: the sub-env's index in the whole VecEnv.
    """

    __slots__ = (
        "_check",
        "_dtype",
        "_final",
        "_shape",
        "autoreset",
        "env",
        "index",
        "resets_itself",
    )

    def __init__(self, env: Env[Any, Any], autoreset: bool, index: int = 0) -> None:
        self.env = env
        self.autoreset = bool(autoreset)
        self.resets_itself = resets_itself(env)
        self.index = index
        self._check = ResultCheck(env.observation_space, index)
        # The common result, accepted by step() without a call: an ndarray of exactly these.
        self._shape, self._dtype = self._check.array_shape, self._check.array_dtype
        self._final: StepResult[Any] | None = None

    @property
    def frozen(self) -> bool:
        """Whether the sub-env finished an episode with ``autoreset=False`` and awaits reset()."""
        return self._final is not None

    # -- decisions shared by both drivers ---------------------------------------------------

    def _frozen_result(self) -> StepResult[Any]:
        final = self._final
        assert final is not None
        return StepResult(final.observation, 0.0, final.terminated, final.truncated, {})

    def _needs_reset(self, result: StepResult[Any]) -> bool:
        """After a step: True when the VecEnv must reset the sub-env now (freezes it instead
        when autoreset is off)."""
        if not (result.terminated or result.truncated) or self.resets_itself:
            return False
        if self.autoreset:
            return True
        self._final = result
        return False

    def _merge(
        self, result: StepResult[Any], final_observation: Any, reset: ResetResult[Any]
    ) -> StepResult[Any]:
        self._check.observation(reset.observation, "reset")
        return StepResult(
            reset.observation,
            result.reward,
            result.terminated,
            result.truncated,
            autoreset_info(result.info, final_observation, reset.info),
        )

    def _checked_reset(self, reset: Any) -> Any:
        self._check.observation(reset.observation, "reset")
        return reset

    # -- sync driver -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset the sub-env (unfreezing it) and return its ResetResult."""
        self._final = None
        return self._checked_reset(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> StepResult[Any]:
        """Step the sub-env under the contract (autoreset or freezing)."""
        if self._final is not None:
            return self._frozen_result()
        result = self.env.step(action)
        obs = result.observation
        # The common case, decided inline (a call would cost as much as these comparisons):
        # an ndarray of the space's shape and dtype, a float reward and bool flags. Anything
        # else goes through the full check, which normalises it or raises.
        if not (
            type(obs) is _ndarray
            and obs.shape == self._shape
            and obs.dtype is self._dtype
            and type(result.reward) is float
            and type(result.terminated) is bool
            and type(result.truncated) is bool
        ):
            result = self._check.step(result)
        if (result.terminated or result.truncated) and self._needs_reset(result):
            final_observation = snapshot(result.observation)
            return self._merge(result, final_observation, self.env.reset())
        return result

    # -- async driver ------------------------------------------------------------------------

    async def async_reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Any:
        """``reset()`` through the sub-env's ``async_reset()``."""
        self._final = None
        return self._checked_reset(await self.env.async_reset(seed=seed, options=options))

    async def async_step(self, action: Any) -> StepResult[Any]:
        """``step()`` through the sub-env's ``async_step()`` / ``async_reset()``."""
        if self._final is not None:
            return self._frozen_result()
        result = self._check.step(await self.env.async_step(action))
        if self._needs_reset(result):
            final_observation = snapshot(result.observation)
            return self._merge(result, final_observation, await self.env.async_reset())
        return result

    # -- attributes through the wrapper stack -------------------------------------------------

    def get_attr(self, name: str) -> Any:
        """``name`` from the outermost layer of the sub-env that has it."""
        return self.env.get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the layer that has it (the outermost wrapper if none has)."""
        self.env.set_attr(name, value)

    def call(
        self, name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        """Call method ``name`` (or read the attribute when it is not callable)."""
        attr = self.env.get_attr(name)
        if callable(attr):
            return attr(*args, **(kwargs or {}))
        return attr

    def close(self) -> None:
        """Close the sub-env."""
        self.env.close()


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


def call_each(fn: Callable[[T, Any], R], items: Sequence[T], args: Sequence[Any]) -> list[R]:
    """``[fn(item, arg) ...]`` for every pair; after all ran, raise the first error (rule 9).

    So one failing sub-env does not leave the others halfway through a call.
    """
    results, errors = run_each(fn, items, args)
    if errors:
        raise errors[0][1]
    return results  # type: ignore[return-value]
