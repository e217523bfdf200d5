"""DelayObservation: observe what the env showed a fixed number of steps ago."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from sekai._args import IntLike, check_int
from sekai.core._snapshot import snapshot
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.spaces import zero_sample
from sekai.wrappers.autoreset import warn_if_around_autoreset

__all__ = ["DelayObservation"]


class DelayObservation(ResultWrapper[Any, Any, Any, Any]):
    """Return the observation from ``delay`` steps ago (the space is unchanged).

    Until ``delay`` steps have passed since the reset, the padding is returned:
    ``zero_sample(space)`` for ``padding="zeros"``, the episode's first observation for
    ``padding="reset"``. The queue is cleared on reset.

    Args:
        env: the environment to wrap.
        delay: the delay in steps (>= 0; 0 passes observations through).
        padding: ``"zeros"`` or ``"reset"``.
    """

    def __init__(self, env: Env[Any, Any], delay: IntLike, padding: str = "zeros") -> None:
        super().__init__(env)
        self.delay = check_int("DelayObservation", "delay", delay, 0)
        if not isinstance(padding, str) or padding not in ("zeros", "reset"):
            raise ValueError(f"padding must be 'zeros' or 'reset', got {padding!r}.")
        self.padding = padding
        self._zero = zero_sample(env.observation_space) if padding == "zeros" else None
        self._queue: deque[Any] = deque(maxlen=self.delay + 1)
        self._first: Any = None
        warn_if_around_autoreset(self)

    def _delayed(self, observation: Any) -> Any:
        if self.delay == 0:
            return observation
        queue = self._queue
        # A snapshot: an env may write each observation into one buffer.
        queue.append(snapshot(observation))
        if len(queue) > self.delay:
            return queue[0]
        # A copy each time: callers may keep or modify what they get.
        return copy.deepcopy(self._zero if self._zero is not None else self._first)

    def _reset_result(self, result: ResetResult[Any]) -> ResetResult[Any]:
        self._queue.clear()
        self._first = copy.deepcopy(result.observation)  # the caller may modify the original
        return ResetResult(self._delayed(result.observation), result.info)

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        return StepResult(
            self._delayed(result.observation),
            result.reward,
            result.terminated,
            result.truncated,
            result.info,
        )
