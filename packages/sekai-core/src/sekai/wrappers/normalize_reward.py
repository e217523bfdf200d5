"""NormalizeReward: scale rewards by the running standard deviation of the discounted return."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._args import reward_scaling_args
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import StepResult
from sekai.core.wrapper import ResultWrapper
from sekai.stats.normalizer import non_finite_advice
from sekai.stats.running import RunningMeanStd, update_checked, wrapper_state_part

__all__ = ["NormalizeReward", "load_return_stats", "return_scale", "update_return_stats"]


# Equal returns are left a variance of about (this * mean)^2 by rounding, not exactly 0.
_ROUNDING = 16 * float(np.finfo(np.float64).eps)


def return_scale(return_rms: RunningMeanStd, epsilon: float) -> float:
    """What rewards are divided by: ``sqrt(return_rms.var + epsilon)``, or 1.0 while the returns
    seen have no spread (a single return, or all equal), where it would multiply the rewards
    by up to ``1 / sqrt(epsilon)`` (10,000 by default)."""
    var = float(return_rms.var)
    # Compared as standard deviations: squaring a mean near float64's limit would overflow.
    if math.sqrt(var) <= _ROUNDING * abs(float(return_rms.mean)):
        return 1.0
    return math.sqrt(var + epsilon)


def load_return_stats(owner: str, return_rms: RunningMeanStd, state: Any) -> None:
    """Load ``state``, a reward normaliser's ``state_dict()`` (``{"return_rms": ...}``), into
    ``return_rms``, checked in full first; errors name ``owner`` and ``state['return_rms']``."""
    part = wrapper_state_part(owner, state, "return_rms")
    return_rms._checked_state(part, f"{owner}: state['return_rms']")()


def update_return_stats(
    owner: str,
    return_rms: RunningMeanStd,
    returns: NDArray[np.float64],
    rewards: NDArray[Any],
    live: NDArray[np.bool_] | None,
    *,
    vector: bool,
) -> None:
    """Update ``return_rms`` with the discounted ``returns`` of the ``live`` sub-envs (None:
    all; a single env's are arrays of one), whose rewards were ``rewards``. A NaN or infinite
    return, or one that would take the statistics past float64's range, raises a ValueError
    naming the sub-env and its reward; nothing is updated."""

    def describe(at: tuple[int, ...], value: float) -> str:
        env = at[0] if live is None else int(np.flatnonzero(live)[at[0]])
        whose = f"sub-env {env}'s" if vector else "the"
        reward = float(rewards[env])
        if math.isfinite(reward):  # an earlier reward, received while frozen, or an overflow
            return f"{whose} discounted return is {value} (this step's reward is {reward})"
        return f"{whose} reward is {reward}"

    batch = returns if live is None else returns[live]
    transform = "VecTransformReward" if vector else "TransformReward"
    update_checked(owner, [(return_rms, batch, describe)], non_finite_advice(transform))


class NormalizeReward(ResultWrapper[Any, Any, Any, Any]):
    """Divide rewards by the running std of the discounted return (the mean is not subtracted).

    Keeps ``R = gamma * R + r`` (reset on done and on reset), updates ``return_rms`` with it
    unless ``update_running_mean`` is False, and returns ``r / sqrt(return_rms.var + epsilon)``
    (``r`` itself while the returns seen have no spread, e.g. on the first step: ``return_scale``).
    While the statistics update, a NaN or infinite return, or one that would take them past
    float64's range, raises ValueError before anything changes; frozen statistics only scale
    (NaN in, NaN out).

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

    def _on_reset(self, seed: SeedLike) -> None:
        self._return = 0.0

    def _step_result(self, result: StepResult[Any]) -> StepResult[Any]:
        reward = float(result.reward)
        discounted = self._return * self.gamma + reward
        if self.update_running_mean and not (
            math.isfinite(discounted) and self.return_rms._combine(discounted, 0.0, 1)
        ):  # a non-finite return, or one that would overflow the statistics: raises, naming it
            update_return_stats(
                "NormalizeReward",
                self.return_rms,
                np.array([discounted]),
                np.array([reward]),
                None,
                vector=False,
            )
        self._return = 0.0 if result.terminated or result.truncated else discounted
        scaled = reward / return_scale(self.return_rms, self.epsilon)
        return StepResult(
            result.observation, scaled, result.terminated, result.truncated, result.info
        )

    def state_dict(self) -> dict[str, Any]:
        """The return statistics, for checkpointing."""
        return {"return_rms": self.return_rms.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()``; an error names the wrapper and the part."""
        load_return_stats("NormalizeReward", self.return_rms, state)
