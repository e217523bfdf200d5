"""Cross-backend conformance: a deterministic env, its native twin, and a trajectory comparison.

Every backend must give identical observations, rewards, flags and infos for the same sub-env
seeds, start options and actions. Tests of each backend (sync, async, native here; proc, ray in
their own test suites) record trajectories with ``record_trajectory`` and compare them with
``assert_same_trajectory``. The envs are importable by reference, so worker processes can
build them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.spaces import Box, Discrete
from sekai.vector.native import NativeVecEnv
from sekai.vector.vec_env import VecEnv

__all__ = [
    "CounterEnv",
    "CounterVecEnv",
    "assert_same_trajectory",
    "record_trajectory",
]

GOAL = 15  # an episode terminates when the position reaches it


def _counter_spaces() -> tuple[Box, Discrete]:
    return Box(0.0, 1000.0, shape=(3,), dtype=np.float32), Discrete(3)


class CounterEnv(Env[NDArray[np.float32], Any]):
    """Deterministic: the position grows by the action (0, 1 or 2) until it reaches ``GOAL``.

    Observation ``[position, steps, episodes]`` (float32, ``steps`` since reset, ``episodes``
    resets so far). ``reset(options={"start": p})`` starts at ``p``; a reset without options
    starts at ``(3 * episodes) % 10``. Reward ``0.5 * action - 0.1 * steps``. Info
    ``{"position": int, "half": float, "tag": int64 array (2,)}``; reset info ``{"start": int}``.
    Randomness is never used, so every backend gives the same trajectory whatever the seeds.
    """

    def __init__(self) -> None:
        self.observation_space, self.action_space = _counter_spaces()
        self.position = 0
        self.steps = 0
        self.episodes = 0

    def _obs(self) -> NDArray[np.float32]:
        return np.array([self.position, self.steps, self.episodes], dtype=np.float32)

    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        start = (3 * self.episodes) % 10
        if options is not None and "start" in options:
            start = int(options["start"])
        self.episodes += 1
        self.position, self.steps = start, 0
        return ResetResult(self._obs(), {"start": start})

    def step(self, action: Any) -> StepResult[NDArray[np.float32]]:
        self.position += int(action)
        self.steps += 1
        info = {
            "position": self.position,
            "half": self.position / 2,
            "tag": np.array([self.position, self.steps], dtype=np.int64),
        }
        reward = 0.5 * int(action) - 0.1 * self.steps
        return StepResult(self._obs(), reward, self.position >= GOAL, False, info)


class CounterVecEnv(NativeVecEnv):
    """The native twin of ``CounterEnv`` (same trajectories on every backend)."""

    def __init__(
        self, num_envs: int, *, autoreset: bool = True, max_episode_steps: int | None = None
    ) -> None:
        observation_space, action_space = _counter_spaces()
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.position = np.zeros(num_envs, dtype=np.int64)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.episodes = np.zeros(num_envs, dtype=np.int64)
        self._starts = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        for index, opts in zip(indices.tolist(), options):
            start = (3 * int(self.episodes[index])) % 10
            if opts is not None and "start" in opts:
                start = int(opts["start"])
            self._starts[index] = start
        self.episodes[indices] += 1
        self.position[indices] = self._starts[indices]
        self.steps[indices] = 0

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        return {"start": self._starts[indices].copy()}

    def _observe(self) -> NDArray[np.float32]:
        return np.stack([self.position, self.steps, self.episodes], axis=1).astype(np.float32)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        live = ~self.frozen  # frozen sub-envs keep their final state, as get_attr reports it
        self.position += np.where(live, np.asarray(actions, dtype=np.int64), 0)
        self.steps += live
        infos = {
            "position": self.position.copy(),
            "half": self.position / 2,
            "tag": np.stack([self.position, self.steps], axis=1),
        }
        rewards = 0.5 * np.asarray(actions, dtype=np.float64) - 0.1 * self.steps
        return rewards, self.position >= GOAL, np.zeros(self.num_envs, dtype=bool), infos


Trajectory = list[tuple[str, Any]]


def record_trajectory(
    vec: VecEnv,
    *,
    steps: int,
    seed: Any = None,
    options: Any = None,
    action_seed: int = 0,
    reset_every: int | None = None,
) -> Trajectory:
    """Reset ``vec`` and step it with reproducible random actions, recording every result.

    Args:
        vec: the VecEnv (closed by the caller).
        steps: the number of steps.
        seed: the seed of the first reset (and of later ones with ``reset_every``).
        options: the options of every reset.
        action_seed: seeds the actions, so every backend receives the same ones.
        reset_every: reset again every that many steps (e.g. to unfreeze sub-envs).
    """
    actions = np.random.default_rng(action_seed)
    n = vec.num_envs
    high = getattr(vec.action_space, "n", 2)
    trajectory: Trajectory = [("reset", vec.reset(seed=seed, options=options))]
    for t in range(1, steps + 1):
        if reset_every is not None and t % reset_every == 0:
            trajectory.append(("reset", vec.reset(seed=seed, options=options)))
            continue
        trajectory.append(("step", vec.step(actions.integers(0, high, size=n))))
    return trajectory


def _same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), f"{where}: {a} != {b}"
        return
    assert type(a) is type(b), f"{where}: type {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            _same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), f"{where}: {a!r} != {b!r}"


def assert_same_trajectory(expected: Trajectory, actual: Trajectory) -> None:
    """Assert two trajectories are identical: observations (values and dtypes), rewards,
    flags and infos (keys in order, value types, values)."""
    assert len(expected) == len(actual)
    for t, ((kind_a, a), (kind_b, b)) in enumerate(zip(expected, actual)):
        assert kind_a == kind_b, f"t={t}: {kind_a} != {kind_b}"
        _same(a.observations, b.observations, f"t={t} observations")
        _same(a.infos, b.infos, f"t={t} infos")
        assert type(a.infos) is list and all(type(info) is dict for info in b.infos)
        if kind_a == "step":
            for field in ("rewards", "terminated", "truncated"):
                _same(getattr(a, field), getattr(b, field), f"t={t} {field}")


def sync_counter_factory(
    backend: Callable[..., VecEnv], max_episode_steps: int | None
) -> Callable[[int, bool], VecEnv]:
    """``factory(num_envs, autoreset)`` building ``backend`` over TimeLimit-wrapped CounterEnvs."""
    from sekai.wrappers.time_limit import TimeLimit

    def make_env() -> Env[Any, Any]:
        env = CounterEnv()
        return TimeLimit(env, max_episode_steps) if max_episode_steps is not None else env

    def factory(num_envs: int, autoreset: bool) -> VecEnv:
        return backend([make_env] * num_envs, autoreset=autoreset)

    return factory
