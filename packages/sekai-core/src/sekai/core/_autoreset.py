"""Same-step autoreset's result, built one way for the AutoReset wrapper and every VecEnv."""

from __future__ import annotations

from typing import Any

from sekai.core._snapshot import snapshot
from sekai.core.result import ResetResult, StepResult

__all__ = ["autoreset_info", "autoreset_result", "keep_ending"]


def autoreset_info(
    step_info: dict[str, Any], final_observation: Any, reset_info: dict[str, Any]
) -> dict[str, Any]:
    """The info of a step that ended an episode and reset the env in the same call."""
    return {
        **step_info,
        "final_observation": final_observation,
        "final_info": step_info,
        "reset_info": reset_info,
    }


def keep_ending(result: StepResult[Any]) -> tuple[Any, dict[str, Any]]:
    """Copies of an ending step's observation and info, taken before the reset that follows:
    an env may write its reset observation into the same buffer (gymnasium#1132), or refill
    the same info dict."""
    return snapshot(result.observation), dict(result.info)


def autoreset_result(
    result: StepResult[Any], kept: tuple[Any, dict[str, Any]], reset: ResetResult[Any]
) -> StepResult[Any]:
    """The ending step's reward and flags with the new episode's first observation, and info
    ``{**step_info, "final_observation", "final_info", "reset_info"}``."""
    final_observation, final_info = kept
    return StepResult(
        reset.observation,
        result.reward,
        result.terminated,
        result.truncated,
        # A copy: an env that refills one reset info dict would rewrite results already kept.
        autoreset_info(final_info, final_observation, dict(reset.info)),
    )
