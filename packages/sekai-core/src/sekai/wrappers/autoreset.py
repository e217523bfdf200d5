"""AutoReset: start the next episode inside the step that ends one."""

from __future__ import annotations

import warnings
from typing import Any

from sekai.core._async import awaitable
from sekai.core._autoreset import autoreset_result, keep_ending, reset_inside
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import Wrapper

__all__ = ["AutoReset", "contains_autoreset", "warn_if_around_autoreset"]

_AROUND_AUTORESET = (
    "{name} is wrapped around an AutoReset, so it does not see the resets that start new "
    "episodes and carries one episode's state into the next. Make AutoReset the outermost "
    "wrapper: AutoReset({name}(env, ...))."
)


def contains_autoreset(env: Env[Any, Any]) -> bool:
    """Whether a layer of ``env``'s wrapper stack is an ``AutoReset``."""
    return any(isinstance(layer, AutoReset) for layer in env)


def warn_if_around_autoreset(wrapper: Wrapper[Any, Any, Any, Any], stacklevel: int = 3) -> None:
    """Warn (``UserWarning``) when a wrapper with per-episode state is built around an AutoReset.

    Call it from the wrapper's ``__init__`` after ``super().__init__(env)``; the default
    ``stacklevel`` points at the code that built the wrapper.
    """
    if contains_autoreset(wrapper.env):
        warnings.warn(
            _AROUND_AUTORESET.format(name=type(wrapper).__name__),
            UserWarning,
            stacklevel=stacklevel,
        )


class AutoReset(Wrapper[Any, Any, Any, Any]):
    """Reset the inner env as soon as an episode ends, within the same ``step()``.

    The returned StepResult carries the new episode's first observation with the ending step's
    reward and flags, and info ``{**step_info, "final_observation": terminal_obs,
    "final_info": step_info, "reset_info": reset_info}``. Put it outermost: wrappers with
    per-episode state built around it warn. A step that an inner AutoReset already reset (its
    info holds ``final_observation``) is passed through: a second reset would skip the episode
    the first one started and report its first observation as the terminal one. An episode
    ended by a layer in between (a TimeLimit) is reset as any other.
    """

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        self._has_inner = contains_autoreset(env)

    def step(self, action: Any) -> StepResult[Any]:
        result = self.env.step(action)
        if (result.terminated or result.truncated) and not self._reset_inside(result):
            kept = keep_ending(result)
            return autoreset_result(result, kept, self.env.reset())
        return result

    async def async_step(self, action: Any) -> StepResult[Any]:
        result = await awaitable(self.env.async_step(action), self.env, "async_step")
        if (result.terminated or result.truncated) and not self._reset_inside(result):
            kept = keep_ending(result)
            reset = await awaitable(self.env.async_reset(), self.env, "async_reset")
            return autoreset_result(result, kept, reset)
        return result

    def _reset_inside(self, result: StepResult[Any]) -> bool:
        """Whether an inner AutoReset already reset the env on this step."""
        return reset_inside(self._has_inner, result.info)
