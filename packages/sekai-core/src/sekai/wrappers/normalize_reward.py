"""NormalizeReward: scale rewards by the running standard deviation of the discounted return."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai._args import reward_scaling_args
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.stats.running import RunningMeanStd

__all__ = ["NormalizeReward", "return_scale"]


# Equal returns are left a variance of about (this * mean)^2 by rounding, not exactly 0.
_ROUNDING = 16 * float(np.finfo(np.float64).eps)


def return_scale(return_rms: RunningMeanStd, epsilon: float) -> float:
    """What rewards are divided by: ``sqrt(return_rms.var + epsilon)``, or 1.0 while the returns
    seen have no spread (a single return, or all equal), where it would multiply the rewards
    by up to ``1 / sqrt(epsilon)`` (10,000 by default)."""
    var = float(return_rms.var)
    if var <= (_ROUNDING * float(return_rms.mean)) ** 2:
        return 1.0
    return math.sqrt(var + epsilon)


class NormalizeReward(ResultWrapper[Any, Any, Any, Any]):
    """Divide rewards by the running std of the discounted return (the mean is not subtracted).

    Keeps ``R = gamma * R + r`` (reset on done and on reset), updates ``return_rms`` with it
    unless ``update_running_mean`` is False, and returns ``r / sqrt(return_rms.var + epsilon)``
    (``r`` itself while the returns seen have no spread, e.g. on the first step: ``return_scale``).

    Args:
        env: the environment to wrap.
        gamma: the discount factor of the return, in ``[0, 1]``.
        epsilon: added to the variance for numerical stability (> 0).
    """

    def __init__(self, env: Env[Any, Any], gamma: float = 0.99, epsilon: float = 1e-8) -> None:
        super().__init__(env)
        self.gamma, self.epsilon = reward_scaling_args("NormalizeReward", gamma, epsilon)
        self.return_rms = RunningMeanStd(shape=())
        self.update_running_mean = True
        self._return = 0.0

    def _on_reset(self, seed: int | np.random.Generator | None) -> None:
        self._return = 0.0

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        reward = float(result.reward)
        self._return = self._return * self.gamma + reward
        if self.update_running_mean:
            self.return_rms.update_from_moments(self._return, 0.0, 1)
        if result.terminated or result.truncated:
            self._return = 0.0
        scaled = reward / return_scale(self.return_rms, self.epsilon)
        return StepResult(
            result.observation, scaled, result.terminated, result.truncated, result.info
        )

    def state_dict(self) -> dict[str, Any]:
        """The return statistics, for checkpointing."""
        return {"return_rms": self.return_rms.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()``."""
        self.return_rms.load_state_dict(state["return_rms"])
