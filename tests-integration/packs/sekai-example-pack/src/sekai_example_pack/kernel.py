"""GridworldKernel: the gridworld as an array kernel, so the jax and torch modes run it.

The documented example of a third-party kernel: written against ``sekai.vector.kernel`` only
(no JAX, no torch), registered by name with ``kernel_entry_point``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai_example_pack.gridworld import GOAL_REWARD, STEP_REWARD, _spaces

__all__ = ["GridworldKernel", "GridworldParams"]


@dataclass(frozen=True)
class GridworldParams:
    """The rewards (floats: arrays on the device) and the grid's side (an int: static)."""

    step_reward: float = STEP_REWARD
    goal_reward: float = GOAL_REWARD
    size: int = 5


class GridworldKernel(ArrayKernel[GridworldParams]):
    """``GridworldVecEnv``'s dynamics as pure array functions over a leading sub-env axis.

    The start cell is ``floor(u * (size**2 - 1))`` for a uniform draw ``u`` (every cell but the
    goal, as the env draws it, from the mode's own random numbers). Positions are held as floats
    of the mode's dtype; the observation is cast to the space's integers by the driver.

    Args:
        size: the side of the grid (>= 2).
    """

    def __init__(self, size: int = 5) -> None:
        self.observation_space, self.action_space = _spaces(size)
        self.params = GridworldParams(size=int(size))

    def reset_draws(self, params: GridworldParams) -> tuple[Draw, ...]:
        return (Draw("start", "uniform"),)

    def reset(
        self,
        xp: Any,
        params: GridworldParams,
        draws: Mapping[str, Any],
        mask: Any,
        state: Mapping[str, Any] | None,
    ) -> KernelReset:
        cell = xp.floor(draws["start"] * (params.size * params.size - 1))
        row = xp.floor(cell / params.size)
        new = {"row": row, "col": cell - row * params.size}
        if state is not None:
            new = {key: xp.where(mask, value, state[key]) for key, value in new.items()}
        return new, xp.stack([new["row"], new["col"]], axis=1), {}

    def step(
        self,
        xp: Any,
        params: GridworldParams,
        state: Mapping[str, Any],
        action: Any,
        draws: Mapping[str, Any],
    ) -> KernelStep:
        one = xp.ones_like(state["row"])
        zero = xp.zeros_like(one)
        # 0 up, 1 right, 2 down, 3 left; a move into a wall leaves the agent in place.
        d_row = xp.where(action == 0, -one, xp.where(action == 2, one, zero))
        d_col = xp.where(action == 1, one, xp.where(action == 3, -one, zero))
        last = float(params.size - 1)
        row = xp.clip(state["row"] + d_row, 0.0, last)
        col = xp.clip(state["col"] + d_col, 0.0, last)
        at_goal = (row == last) & (col == last)
        reward = xp.where(at_goal, params.goal_reward * one, params.step_reward * one)
        new = {"row": row, "col": col}
        obs = xp.stack([row, col], axis=1)
        return new, obs, reward, at_goal, xp.zeros_like(at_goal), {}
