"""Tiny deterministic environments for tests: a single env, its native vector twin, a plugin.

``LineEnv`` walks a point along ``0 .. size-1``: action 1 moves right, 0 moves left; reaching
the right end terminates with reward 1, every other step costs 0.1. Only the start position
is random (drawn from ``self.rng``), so a seed fixes the whole episode.
``LineVecEnv`` is the same env as a ``NativeVecEnv``. ``LinePlugin`` registers both as
``<plugin name>/Line-v0`` (``max_episode_steps=20``) for ``sekai.testing.registry_sandbox``.
``KStepEnv`` counts steps and ends after ``k``, for autoreset and freezing checks of vector envs;
``KStepKernel`` (from ``sekai.vector.kernel_check``, whose checks run it) is the same env as an
array kernel, for kernel modes; ``assert_kstep_autoreset`` checks a vector env of them step by
step.
``Drift`` and ``DriftVecEnv`` are the vector page's example: a randomly drifting point pushed
back towards zero, as a single env and as its native vector twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.error import InvalidAction, ResetRequired
from sekai.plugins import EnvRegistrar, hookimpl
from sekai.spaces import Box, Discrete
from sekai.vector.kernel_check import KStepKernel, kstep_autoreset_issue
from sekai.vector.native import NativeVecEnv
from sekai.vector.vec_env import VecEnv

__all__ = [
    "Drift",
    "DriftVecEnv",
    "KStepEnv",
    "KStepKernel",
    "LineEnv",
    "LinePlugin",
    "LineVecEnv",
    "assert_kstep_autoreset",
]


def _check_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ValueError(f"size must be an int >= 2, got {size!r}.")
    return int(size)


def _start(options: dict[str, Any] | None, size: int) -> int | None:
    """``options["start"]`` checked (a position in ``0 .. size-1``), or None when not given."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")
    start = options.get("start")
    if start is None:
        return None
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < size:
        raise ValueError(f"options['start'] must be an int in 0..{size - 1}, got {start!r}.")
    return int(start)


class LineEnv(Env[NDArray[np.float32], np.int64]):
    """A point on a line that must reach the right end (deterministic given the seed).

    Args:
        size: the number of positions (>= 2).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_fps": 10}

    def __init__(self, size: int = 5) -> None:
        self.size = _check_size(size)
        self.observation_space = Box(0.0, float(self.size - 1), shape=(1,), dtype=np.float32)
        self.action_space = Discrete(2)
        self.position: int | None = None

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[NDArray[np.float32]]:
        start = _start(options, self.size)  # before seeding: a refused reset changes nothing
        self._set_rng(seed)
        self.position = int(self.rng.integers(0, self.size - 1)) if start is None else start
        return ResetResult(self._observation(), {})

    def step(self, action: np.int64) -> StepResult[NDArray[np.float32]]:
        if self.position is None:
            raise ResetRequired()
        if not self.action_space.contains(action):
            raise InvalidAction(action, self.action_space)
        move = 1 if int(action) == 1 else -1
        self.position = min(max(self.position + move, 0), self.size - 1)
        terminated = self.position == self.size - 1
        return StepResult(self._observation(), 1.0 if terminated else -0.1, terminated, False, {})

    def _observation(self) -> NDArray[np.float32]:
        return np.array([self.position], dtype=np.float32)


class LineVecEnv(NativeVecEnv):
    """``num_envs`` copies of ``LineEnv`` stepped together with array operations.

    Args:
        num_envs: the number of sub-envs.
        size: the number of positions (>= 2).
        autoreset: reset finished sub-envs within the same step.
        max_episode_steps: truncate every sub-env after this many steps.
    """

    def __init__(
        self,
        num_envs: int,
        *,
        size: int = 5,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        self.size = _check_size(size)
        super().__init__(
            num_envs,
            Box(0.0, float(self.size - 1), shape=(1,), dtype=np.float32),
            Discrete(2),
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.position = np.zeros(self.num_envs, dtype=np.int64)

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        _start(options, self.size)  # every sub-env's, before anything is seeded

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        for index, opts in zip(indices, options):
            start = _start(opts, self.size)  # valid: _check_reset_options checked it
            self.position[index] = self.rng.integers(0, self.size - 1) if start is None else start

    def _observe(self) -> NDArray[np.float32]:
        return self.position[:, None].astype(np.float32)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        move = np.where(np.asarray(actions) == 1, 1, -1)
        move = np.where(self.frozen, 0, move)
        self.position = np.clip(self.position + move, 0, self.size - 1)
        terminated = self.position == self.size - 1
        rewards = np.where(terminated, 1.0, -0.1)
        return rewards, terminated, np.zeros(self.num_envs, dtype=bool), {}


class KStepEnv(Env[NDArray[np.float32], Any]):
    """Observation ``[episode, t]``; terminates after ``k`` steps; refuses steps after that.

    ``reset()`` ignores its seed (nothing is random) and starts the next episode: ``episode``
    counts from 0 and ``resets`` counts the calls. Step ``t`` has reward ``float(t)`` and info
    ``{"t": t}``; a reset has info ``{"episode": episode}``. A step after the end raises
    ``ResetRequired``, so a vector env that steps a finished sub-env fails loudly.

    Args:
        k: the number of steps in every episode.
    """

    def __init__(self, k: int) -> None:
        self.observation_space = Box(0.0, np.inf, shape=(2,))
        self.action_space = Discrete(2)
        self.k = k
        self.episode = -1
        self.t = 0
        self.resets = 0

    def _obs(self) -> NDArray[np.float32]:
        return np.array([self.episode, self.t], dtype=np.float32)

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[NDArray[np.float32]]:
        self.resets += 1
        self.episode += 1
        self.t = 0
        return ResetResult(self._obs(), {"episode": self.episode})

    def step(self, action: Any) -> StepResult[NDArray[np.float32]]:
        if self.t >= self.k:
            raise ResetRequired("the episode has ended")
        self.t += 1
        return StepResult(self._obs(), float(self.t), self.t == self.k, False, {"t": self.t})


def assert_kstep_autoreset(vec: VecEnv, ks: Sequence[int], steps: int) -> None:
    """Assert that a vector env of ``KStepEnv(k) for k in ks`` (or of ``KStepKernel(ks)``)
    autoresets losing no step.

    Resets with ``seed=0``, then takes ``steps`` steps with action 0 and checks, at every step,
    every sub-env's observation, reward, flags (never truncated) and infos against its counter,
    including the ``final_observation``/``final_info``/``reset_info`` of each same-step reset
    (``sekai.vector.kernel_check.kstep_autoreset_issue``, which ``sekai check --mode`` runs).

    Raises:
        AssertionError: the first result that differs from the expected one.
    """
    issue = kstep_autoreset_issue(vec, ks, steps)
    if issue is not None:
        raise AssertionError(issue)


class LinePlugin:
    """An in-memory plugin registering ``<name>/Line-v0`` (use it with ``registry_sandbox``).

    ``registry_sandbox(LinePlugin)`` names the plugin ``sandbox``, so the ID is
    ``sandbox/Line-v0``; ``registry_sandbox(("testing", LinePlugin))`` gives ``testing/Line-v0``.
    """

    @staticmethod
    @hookimpl
    def sekai_register_envs(registry: EnvRegistrar) -> None:
        """Register ``<plugin>/Line-v0`` with its native vector version."""
        plugin = registry.current.name if registry.current is not None else "sandbox"
        registry.register(
            f"{plugin}/Line-v0",
            "sekai.testing.envs:LineEnv",
            vector_entry_point="sekai.testing.envs:LineVecEnv",
            max_episode_steps=20,
        )


class Drift(Env[NDArray[np.float32], Any]):
    """Push a drifting point back towards zero (the vector page's example).

    Each step moves ``x`` by +0.5 (action 1) or -0.5 (action 0) plus ``N(0, 0.1)`` noise; the
    reward is ``-|x|`` and the episode terminates once ``|x| > 5``. ``reset()`` draws
    ``x ~ N(0, 1)``. The observation is ``[x]`` clipped to ``[-10, 10]``.
    """

    def __init__(self) -> None:
        self.observation_space = Box(-10.0, 10.0, shape=(1,))
        self.action_space = Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        self.x = self.rng.normal()
        return ResetResult(np.array([self.x], np.float32), {})

    def step(self, action: Any) -> StepResult[NDArray[np.float32]]:
        self.x += (0.5 if action == 1 else -0.5) + self.rng.normal(0.0, 0.1)
        obs = np.array([np.clip(self.x, -10, 10)], np.float32)
        return StepResult(obs, -abs(self.x), abs(self.x) > 5, False, {})


class DriftVecEnv(NativeVecEnv):
    """``num_envs`` copies of ``Drift`` stepped together with array operations (the page's).

    All sub-envs draw from the one generator ``self.rng``, so results match ``Drift`` under
    ``SyncVecEnv`` in distribution, not draw for draw.

    Args:
        num_envs: the number of sub-envs.
        max_episode_steps: truncate every sub-env after this many steps.
        autoreset: reset finished sub-envs within the same step.
    """

    def __init__(
        self, num_envs: int, *, max_episode_steps: int | None = None, autoreset: bool = True
    ) -> None:
        super().__init__(
            num_envs,
            Box(-10.0, 10.0, shape=(1,)),
            Discrete(2),
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.x = np.zeros(num_envs)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self.x[indices] = self.rng.normal(size=len(indices))

    def _observe(self) -> NDArray[np.float32]:
        return np.clip(self.x, -10, 10)[:, None].astype(np.float32)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        push = np.where(np.asarray(actions) == 1, 0.5, -0.5)
        self.x += push + self.rng.normal(0.0, 0.1, size=self.num_envs)
        terminated = np.abs(self.x) > 5
        return -np.abs(self.x), terminated, np.zeros(self.num_envs, bool), {}
