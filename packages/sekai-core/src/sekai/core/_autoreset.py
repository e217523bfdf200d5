"""Same-step autoreset's result, built one way for the AutoReset wrapper and every VecEnv."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sekai.core._snapshot import snapshot, snapshot_info
from sekai.core.result import ResetResult, StepResult

__all__ = ["autoreset_info", "autoreset_result", "keep_ending", "reset_inside"]


def reset_inside(has_autoreset: bool, info: Mapping[str, Any]) -> bool:
    """Whether an AutoReset inside the env already reset it on the step that returned ``info``.

    ``has_autoreset`` tells whether a layer below is an AutoReset; the step was reset when its
    info holds ``final_observation``. The one rule of every layer that resets an env with an
    AutoReset inside (an outer AutoReset, a VecEnv's sub-env; a VecEnv without autoreset
    freezes instead): such a step is passed on as it is (a second reset would skip the episode
    the first one started), and any other step that ends an episode (one a layer above the
    inner AutoReset ended, such as a TimeLimit around it) is reset as in any env.
    """
    return has_autoreset and "final_observation" in info


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
    the same info dict, or the dicts and arrays in it (``snapshot_info``)."""
    return snapshot(result.observation), _info_copy(result.info, "step")


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
        autoreset_info(final_info, final_observation, _info_copy(reset.info, "reset")),
    )


def _info_copy(info: Any, method: str) -> dict[str, Any]:
    """A ``snapshot_info`` of the info an env's ``method()`` returned, which must be a
    Mapping."""
    if type(info) is dict or isinstance(info, Mapping):  # a dict without the ABC's check
        return snapshot_info(info)
    raise TypeError(
        f"AutoReset: the env's {method}() returned info {info!r:.80} ({type(info).__name__}); "
        "an info must be a dict, which AutoReset extends with final_observation, final_info "
        "and reset_info."
    )
