"""Trading-v0 baselines: a constant position, and buy and hold (the Kelly-clipped long)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.baselines._checks import check_count, require_env
from sekai.finance.baselines._evaluate import BaselinePolicy, env_attr, is_batch

__all__ = ["BuyAndHold", "ConstantPosition"]


class ConstantPosition(BaselinePolicy):
    """Always choose ``positions[index]`` (holding 1 or 0 trades only once).

    Args:
        index: the action, an index into the env's ``positions``.
    """

    def __init__(self, index: int) -> None:
        self.index: int = check_count("index", index, 0)

    def _index(self, env: Any) -> int:
        n = len(env_attr(env, "positions"))
        if self.index >= n:
            raise ValueError(
                f"{self!r}: index must be below the env's {n} positions "
                f"{list(env_attr(env, 'positions'))}, got {self.index}."
            )
        return self.index

    def __call__(self, observation: Any, env: Any) -> Any:
        """The action (an int), or a ``(num_envs,)`` batch for a vector env.

        Raises:
            ValueError: ``index`` is not an index into the env's ``positions``.
        """
        require_env(self, env, "Trading-v0")
        index = self._index(env)
        if is_batch(env):
            return np.full(env.num_envs, index, dtype=np.int64)
        return index

    def __repr__(self) -> str:
        return f"ConstantPosition({self.index})"


class BuyAndHold(ConstantPosition):
    """Go long (position 1.0, else the largest allowed position) and hold it.

    On the default GBM market this is the growth-optimal choice among ``(-1, 0, 1)``: the Kelly
    fraction ``mu / sigma**2 = 1.25`` clipped to the allowed positions.
    """

    def __init__(self) -> None:
        super().__init__(0)

    def _index(self, env: Any) -> int:
        positions = list(env_attr(env, "positions"))
        if 1.0 in positions:
            return positions.index(1.0)
        return int(np.argmax(positions))

    def __repr__(self) -> str:
        return "BuyAndHold()"
