"""Gridworld: walk from a random cell to the bottom-right corner of a square grid."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

import sekai
from sekai.spaces import Box, Discrete, DiscreteAction
from sekai.vector import NativeVecEnv

__all__ = ["GridworldEnv", "GridworldVecEnv"]

# Action -> (row, column) move: up, right, down, left.
MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]], dtype=np.int64)
STEP_REWARD = -0.01
GOAL_REWARD = 1.0


def _spaces(size: int) -> tuple[Box, Discrete]:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ValueError(f"size must be an int >= 2, got {size!r}.")
    return Box(0, int(size) - 1, shape=(2,), dtype=np.int64), Discrete(4)


def _start_option(options: Any) -> Any:
    """``options["start"]`` (None when not given); ``options`` must be a dict or None, as
    every built-in env requires."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")
    return options.get("start")


def _start_cell(start: Any, size: int) -> tuple[int, int]:
    """``options["start"]`` checked: a ``(row, column)`` pair of ints inside the grid, as a
    tuple, list or 1-D array (a mapping, set or other iterable has no row and column)."""
    sequence = isinstance(start, (tuple, list)) or (
        isinstance(start, np.ndarray) and start.ndim == 1
    )
    cell = tuple(start) if sequence else ()
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in cell)
    if len(cell) != 2 or not ints or not all(0 <= v < size for v in cell):
        raise ValueError(
            f"options['start'] must be a (row, column) pair of ints (a tuple, list or 1-D "
            f"array), each in 0..{size - 1} (the {size} x {size} grid), got {start!r}."
        )
    return int(cell[0]), int(cell[1])


class GridworldEnv(sekai.Env[NDArray[np.int64], DiscreteAction]):
    """An agent on a ``size`` x ``size`` grid must reach the bottom-right corner.

    Observation: the agent's ``[row, column]``. Actions: 0 up, 1 right, 2 down, 3 left (moves
    into a wall leave it in place). Reward ``-0.01`` per step, ``1.0`` on reaching the goal,
    which terminates the episode. The start cell is drawn from ``self.rng`` (never the goal);
    ``reset(options={"start": (row, col)})`` chooses it (a cell of the grid, else
    ``ValueError``; options that are not a dict or None raise ``TypeError``).

    Args:
        size: the side of the grid (>= 2).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 4}

    def __init__(self, size: int = 5) -> None:
        self.observation_space, self.action_space = _spaces(size)
        self.size = int(size)
        self.position: NDArray[np.int64] | None = None

    def reset(
        self,
        *,
        seed: sekai.SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> sekai.ResetResult[NDArray[np.int64]]:
        start = _start_option(options)
        if start is not None:  # checked before seeding: a refused reset changes nothing
            start = _start_cell(start, self.size)
        self._set_rng(seed)
        if start is None:
            cell = int(self.rng.integers(0, self.size * self.size - 1))  # every cell but the goal
            start = divmod(cell, self.size)
        self.position = np.array(start, dtype=np.int64)
        return sekai.ResetResult(self.position.copy(), {})

    def step(self, action: DiscreteAction) -> sekai.StepResult[NDArray[np.int64]]:
        if self.position is None:
            raise sekai.ResetRequired()
        if not self.action_space.contains(action):
            raise sekai.InvalidAction(action, self.action_space)
        self.position = np.clip(self.position + MOVES[int(action)], 0, self.size - 1)
        at_goal = bool(np.all(self.position == self.size - 1))
        reward = GOAL_REWARD if at_goal else STEP_REWARD
        return sekai.StepResult(self.position.copy(), reward, at_goal, False, {})


class GridworldVecEnv(NativeVecEnv):
    """``num_envs`` gridworlds stepped together with array operations.

    Args:
        num_envs: the number of sub-envs.
        size: the side of the grid (>= 2).
        autoreset: reset finished sub-envs within the same step.
        max_episode_steps: truncate every sub-env after this many steps.
    """

    metadata = GridworldEnv.metadata

    def __init__(
        self,
        num_envs: int,
        *,
        size: int = 5,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        observation_space, action_space = _spaces(size)
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.size = int(size)
        self.position: NDArray[np.int64] = np.zeros((self.num_envs, 2), dtype=np.int64)

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        start = _start_option(options)
        if start is not None:  # every sub-env's start is checked before any is reset
            _start_cell(start, self.size)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        cells = self.rng.integers(0, self.size * self.size - 1, size=len(indices))
        for row, (index, opts) in enumerate(zip(indices, options)):
            start = _start_option(opts)
            if start is None:
                self.position[index] = divmod(int(cells[row]), self.size)
            else:
                self.position[index] = _start_cell(start, self.size)

    def _observe(self) -> NDArray[np.int64]:
        observation: NDArray[np.int64] = self.position.copy()  # a new array, never a view
        return observation

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        moves = MOVES[np.asarray(actions, dtype=np.int64)]
        moves[self.frozen] = 0  # a finished sub-env keeps its final cell
        self.position = np.clip(self.position + moves, 0, self.size - 1)
        at_goal = np.all(self.position == self.size - 1, axis=1)
        rewards = np.where(at_goal, GOAL_REWARD, STEP_REWARD)
        return rewards, at_goal, np.zeros(self.num_envs, dtype=bool), {}
