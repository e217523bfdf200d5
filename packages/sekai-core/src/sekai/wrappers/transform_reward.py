"""Stateless reward wrappers: TransformReward and ClipReward."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from sekai._args import check_real, resolve_callable
from sekai.core.env import Env
from sekai.core.wrapper import RewardWrapper

__all__ = ["ClipReward", "TransformReward"]


class TransformReward(RewardWrapper[Any, Any]):
    """Apply ``func`` to every reward.

    Args:
        env: the environment to wrap.
        func: the reward transform (also accepted as ``fn=``).
    """

    def __init__(
        self,
        env: Env[Any, Any],
        func: Callable[[float], float] | None = None,
        *,
        fn: Callable[[float], float] | None = None,
    ) -> None:
        super().__init__(env)
        self.func = resolve_callable("TransformReward", "func", func, "fn", fn)

    def reward(self, reward: float) -> float:
        """Return ``func(reward)``."""
        return cast(float, self.func(reward))


_CLIP = "ClipReward"


class ClipReward(RewardWrapper[Any, Any]):
    """Clip every reward to ``[min_reward, max_reward]`` and return it as a Python float.

    Args:
        env: the environment to wrap.
        min_reward: the lower bound (``None``: unbounded).
        max_reward: the upper bound (``None``: unbounded).
    """

    def __init__(
        self,
        env: Env[Any, Any],
        min_reward: float | None = -math.inf,
        max_reward: float | None = math.inf,
    ) -> None:
        super().__init__(env)
        low = (
            -math.inf if min_reward is None else check_real("ClipReward", "min_reward", min_reward)
        )
        high = (
            math.inf if max_reward is None else check_real("ClipReward", "max_reward", max_reward)
        )
        if math.isnan(low) or math.isnan(high) or not low < high:
            raise ValueError(
                f"min_reward ({min_reward}) must be less than max_reward ({max_reward})."
            )
        self.min_reward = low
        self.max_reward = high

    def reward(self, reward: float) -> float:
        """Return the reward clipped to the bounds."""
        return min(max(float(reward), self.min_reward), self.max_reward)
