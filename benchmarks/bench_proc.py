"""ProcVecEnv throughput: shared memory against pickling, and against gymnasium's AsyncVectorEnv.

Run: ``python benchmarks/bench_proc.py [--steps N] [--repeats R]`` (needs sekai-classic and
gymnasium). Wall-clock env steps per second, the best of ``R`` runs, the contenders of each
case measured in turn so that load from other processes hits them alike:

1. A cheap env with 1 MiB observations (float32 512 x 512), 4 sub-envs on 2 workers:
   ProcVecEnv with shared memory against the same with pickled observations (bar: >= 3x).
2. CartPole-v1 x 16: ProcVecEnv with ``num_workers=2`` against gymnasium's AsyncVectorEnv x 16,
   which runs one process per sub-env (bar: >= 3x).
3. CartPole-v1 x 16 with one worker per sub-env on both sides (bar: >= 1.2x).

Each figure also gives the CPU time all processes of the contender (parent and workers) spent
per env step in its best run, which depends less on other load on the machine. Both libraries
use their default start method (forkserver for ProcVecEnv, fork for gymnasium on
Linux: it only changes start-up) and their default autoreset; actions come from a fixed pool.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
from _args import positive_int

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


def _cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) used so far by the processes ``pids`` (Linux), else 0."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class Contender:
    """A vector env to time: its step, its number of sub-envs and its processes."""

    def __init__(self, name: str, vec: Any, num_envs: int, workers: list[int]) -> None:
        self.name = name
        self.step = vec.step
        self.num_envs = num_envs
        self.pids = [os.getpid(), *workers]
        self.rate = 0.0  # best env steps per second
        self.cpu = float("inf")  # CPU microseconds per env step, all processes, in that run

    def run(self, actions: np.ndarray[Any, Any]) -> None:
        cpu = _cpu_seconds(self.pids)
        start = time.perf_counter()
        for row in actions:
            self.step(row)
        rate = actions.size / (time.perf_counter() - start)
        if rate > self.rate:
            self.rate = rate
            self.cpu = (_cpu_seconds(self.pids) - cpu) / actions.size * 1e6


def _measure(contenders: list[Contender], steps: int, repeats: int) -> None:
    """Time every contender ``repeats`` times, in turn, after a warm-up."""
    pools = [np.random.default_rng(0).integers(0, 2, (steps, c.num_envs)) for c in contenders]
    for contender, pool in zip(contenders, pools):
        contender.run(pool[: max(10, steps // 10)])
        contender.rate = 0.0
    for _ in range(repeats):
        for contender, pool in zip(contenders, pools):
            contender.run(pool)


def _report(title: str, ours: Contender, theirs: Contender, bar: float) -> bool:
    ratio = ours.rate / theirs.rate
    print(title)
    for contender in (ours, theirs):
        print(
            f"  {contender.name:<42} {contender.rate:>9,.0f} steps/s "
            f"({contender.cpu:6.1f} us CPU per step)"
        )
    verdict = "ok" if ratio >= bar else "BELOW THE BAR"
    print(f"  ratio {ratio:.2f}x (bar: >= {bar}x) {verdict}\n")
    return ratio >= bar


def _worker_pids(vec: ProcVecEnv) -> list[int]:
    pool = vec._pool  # private: the benchmark reports the workers' CPU time too
    return [] if pool is None else [handle.process.pid for handle in pool.workers]


def bench_shared_memory(steps: int, repeats: int) -> bool:
    shared = ProcVecEnv([BigObsEnv] * 4, num_workers=2, shared_memory=True)
    pickled = ProcVecEnv([BigObsEnv] * 4, num_workers=2, shared_memory=False)
    try:
        ours = Contender("ProcVecEnv, shared memory", shared, 4, _worker_pids(shared))
        theirs = Contender("ProcVecEnv, pickled observations", pickled, 4, _worker_pids(pickled))
        shared.reset(seed=0)
        pickled.reset(seed=0)
        _measure([ours, theirs], steps, repeats)
    finally:
        shared.close()
        pickled.close()
    return _report("1 MiB observations, 4 sub-envs on 2 workers:", ours, theirs, 3.0)


def _gymnasium_cartpoles(n: int) -> Any:
    import gymnasium

    return gymnasium.vector.AsyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * n)


def _gym_pids(vec: Any) -> list[int]:
    return [process.pid for process in vec.processes]


def bench_cartpole(steps: int, repeats: int) -> bool:
    def cartpole() -> Env:  # type: ignore[type-arg]
        return sekai.make("CartPole-v1")

    two = ProcVecEnv([cartpole] * 16, num_workers=2)
    each = ProcVecEnv([cartpole] * 16, num_workers=16)
    gym = _gymnasium_cartpoles(16)
    try:
        contenders = [
            Contender("ProcVecEnv, num_workers=2", two, 16, _worker_pids(two)),
            Contender("ProcVecEnv, 16 workers", each, 16, _worker_pids(each)),
            Contender("gymnasium AsyncVectorEnv, 16 processes", gym, 16, _gym_pids(gym)),
        ]
        for vec in (two, each, gym):
            vec.reset(seed=0)
        _measure(contenders, steps, repeats)
    finally:
        two.close()
        each.close()
        gym.close()
    first = _report("CartPole-v1 x 16:", contenders[0], contenders[2], 3.0)
    second = _report("CartPole-v1 x 16, one worker per sub-env:", contenders[1], contenders[2], 1.2)
    return first and second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=2000, help="vector steps per run")
    parser.add_argument("--repeats", type=positive_int, default=5)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100 steps, 1 repeat")
    args, _ = parser.parse_known_args()  # nox -s bench passes its posargs to every script
    if args.quick:
        args.steps, args.repeats = 100, 1
    ok = bench_shared_memory(max(1, args.steps // 10), args.repeats)
    ok = bench_cartpole(args.steps, args.repeats) and ok
    print("all bars met" if ok else "some bars missed")


if __name__ == "__main__":
    main()
