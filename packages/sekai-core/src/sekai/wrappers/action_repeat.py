"""ActionRepeat: repeat each action several times, summing the rewards."""

from __future__ import annotations

from typing import Any

from sekai._args import IntLike, check_int
from sekai.core._async import awaitable
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import Wrapper

__all__ = ["ActionRepeat"]


class ActionRepeat(Wrapper[Any, Any, Any, Any]):
    """Step up to ``repeat`` times with the same action, stopping early when the episode ends.

    Returns the last observation and flags, the summed reward (a Python float) and
    ``info = {**last_info, "action_repeats": n}`` with ``n`` the steps actually taken. There is
    no frame max-pooling.

    Args:
        env: the environment to wrap.
        repeat: how many times each action is applied (>= 1).
    """

    def __init__(self, env: Env[Any, Any], repeat: IntLike) -> None:
        super().__init__(env)
        self.repeat = check_int("ActionRepeat", "repeat", repeat, 1)

    @staticmethod
    def _result(last: StepResult[Any], total: float, n: int) -> StepResult[Any]:
        return StepResult(
            last.observation,
            total,
            last.terminated,
            last.truncated,
            {**last.info, "action_repeats": n},
        )

    def step(self, action: Any) -> StepResult[Any]:
        total, n = 0.0, 0
        while True:
            result = self.env.step(action)
            total += float(result.reward)
            n += 1
            if n >= self.repeat or result.terminated or result.truncated:
                return self._result(result, total, n)

    async def async_step(self, action: Any) -> StepResult[Any]:
        total, n = 0.0, 0
        while True:
            result = await awaitable(self.env.async_step(action), self.env, "async_step")
            total += float(result.reward)
            n += 1
            if n >= self.repeat or result.terminated or result.truncated:
                return self._result(result, total, n)
