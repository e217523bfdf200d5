"""ProcVecEnv throughput: shared memory against pickling, and against gymnasium's AsyncVectorEnv.

Run: ``python benchmarks/bench_proc.py [--steps N] [--repeats R]`` (needs sekai-classic and
gymnasium). Wall-clock env steps per second, the best of ``R`` runs, the contenders of each
case measured in turn so that load from other processes hits them alike:

1. A cheap env with 1 MiB observations (float32 512 x 512), 4 sub-envs on 2 workers:
   ProcVecEnv with shared memory against the same with pickled observations (bar: >= 3x).
2. CartPole-v1 x 16: ProcVecEnv with ``num_workers=2`` against gymnasium's AsyncVectorEnv x 16,
   which runs one process per sub-env (bar: >= 3x).
3. CartPole-v1 x 16 with one worker per sub-env on both sides (bar: >= 1.2x).

Both libraries use their default start method (forkserver for ProcVecEnv, fork for gymnasium on
Linux: it only changes start-up) and their default autoreset; actions come from a fixed pool.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import sekai
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.spaces import Box, Discrete
from sekai.vector import ProcVecEnv

OBS_SHAPE = (512, 512)  # float32: 1 MiB


class BigObsEnv(Env):  # type: ignore[type-arg]
    """A step costs next to nothing; every observation is 1 MiB."""

    def __init__(self) -> None:
        self.observation_space = Box(0.0, 1.0, shape=OBS_SHAPE)
        self.action_space = Discrete(2)
        self._obs = np.zeros(OBS_SHAPE, np.float32)
        self._t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> ResetResult[Any]:
        self._set_rng(seed)
        self._t = 0
        return ResetResult(self._obs, {})

    def step(self, action: Any) -> StepResult[Any]:
        self._t += 1
        self._obs[0, 0] = self._t % 2
        return StepResult(self._obs, 1.0, False, self._t % 200 == 0, {})


def _rate(step: Callable[[Any], Any], actions: np.ndarray[Any, Any]) -> float:
    """Env steps per second of ``step`` over the pool of actions."""
    start = time.perf_counter()
    for row in actions:
        step(row)
    return actions.size / (time.perf_counter() - start)


def _best(contenders: list[tuple[Callable[[Any], Any], int]], steps: int, repeats: int) -> list[float]:
    """The best rate of each ``(step, num_envs)`` contender, measured in turn."""
    pools = [np.random.default_rng(0).integers(0, 2, (steps, n)) for _, n in contenders]
    for (step, _), pool in zip(contenders, pools):
        _rate(step, pool[: max(10, steps // 10)])  # warm up
    best = [0.0] * len(contenders)
    for _ in range(repeats):
        for index, ((step, _), pool) in enumerate(zip(contenders, pools)):
            best[index] = max(best[index], _rate(step, pool))
    return best


def _report(title: str, names: list[str], rates: list[float], bar: float) -> bool:
    ratio = rates[0] / rates[1]
    print(title)
    for name, rate in zip(names, rates):
        print(f"  {name:<44} {rate:>10,.0f} steps/s")
    verdict = "ok" if ratio >= bar else "BELOW THE BAR"
    print(f"  ratio {ratio:.2f}x (bar: >= {bar}x) {verdict}\n")
    return ratio >= bar


def bench_shared_memory(steps: int, repeats: int) -> bool:
    shared = ProcVecEnv([BigObsEnv] * 4, num_workers=2, shared_memory=True)
    pickled = ProcVecEnv([BigObsEnv] * 4, num_workers=2, shared_memory=False)
    try:
        shared.reset(seed=0)
        pickled.reset(seed=0)
        rates = _best([(shared.step, 4), (pickled.step, 4)], steps, repeats)
    finally:
        shared.close()
        pickled.close()
    return _report(
        "1 MiB observations, 4 sub-envs on 2 workers:",
        ["ProcVecEnv, shared memory", "ProcVecEnv, pickled observations"],
        rates,
        3.0,
    )


def _gymnasium_cartpoles(n: int) -> Any:
    import gymnasium

    return gymnasium.vector.AsyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * n)


def bench_cartpole(steps: int, repeats: int) -> bool:
    def cartpole() -> Env:  # type: ignore[type-arg]
        return sekai.make("CartPole-v1")

    two = ProcVecEnv([cartpole] * 16, num_workers=2)
    each = ProcVecEnv([cartpole] * 16)
    gym = _gymnasium_cartpoles(16)
    try:
        for vec in (two, each):
            vec.reset(seed=0)
        gym.reset(seed=0)
        rates = _best([(two.step, 16), (each.step, 16), (gym.step, 16)], steps, repeats)
    finally:
        two.close()
        each.close()
        gym.close()
    first = _report(
        "CartPole-v1 x 16:",
        ["ProcVecEnv, num_workers=2", "gymnasium AsyncVectorEnv (16 processes)"],
        [rates[0], rates[2]],
        3.0,
    )
    second = _report(
        "CartPole-v1 x 16, one worker per sub-env:",
        ["ProcVecEnv (16 workers)", "gymnasium AsyncVectorEnv (16 processes)"],
        [rates[1], rates[2]],
        1.2,
    )
    return first and second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="vector steps per run")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ok = bench_shared_memory(max(1, args.steps // 10), args.repeats)
    ok = bench_cartpole(args.steps, args.repeats) and ok
    print("all bars met" if ok else "some bars missed")


if __name__ == "__main__":
    main()
