"""Vector env overhead: SyncVecEnv over a bare sub-env loop, and the native base class's share.

Run: ``python benchmarks/bench_vector.py [--sync-envs 16] [--native-envs 4096] [--steps N]``.

1. SyncVecEnv per-step overhead over the bare loop that does the same work by hand (step every
   sub-env, reset the finished ones, stack observations, build reward/flag arrays); the
   bar is <= 15%. Sub-envs: CartPole-v1 (``CartPoleEnv`` in ``TimeLimit(500)``) when
   sekai-classic is installed, else the vector page's Drift.
2. The page's DriftVecEnv at 4096 sub-envs: the share of step time spent in the NativeVecEnv
   base class (everything but the hooks ``_step``, ``_observe``, ``_reset_envs``,
   ``_reset_infos``), measured by timing the hooks, plus a cProfile breakdown; the bar is
   <= 30%.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _args import positive_int

import sekai.testing.envs
from sekai.core.env import Env
from sekai.testing.envs import Drift, DriftVecEnv
from sekai.vector import SyncVecEnv
from sekai.wrappers.time_limit import TimeLimit

# The module whose functions are DriftVecEnv's hooks, for the cProfile breakdown.
_HOOKS_FILE = sekai.testing.envs.__file__


def _sub_env_factory() -> tuple[str, Callable[[], Env]]:  # type: ignore[type-arg]
    try:
        from sekai.envs.classic_control.cartpole import CartPoleEnv
    except ImportError:
        return "Drift (TimeLimit 100)", lambda: TimeLimit(Drift(), 100)
    return "CartPole-v1 (TimeLimit 500)", lambda: TimeLimit(CartPoleEnv(), 500)


def _best(fns: list[Callable[[], None]], repeats: int) -> list[float]:
    """Best CPU time of each function, running them in turn (so load spikes hit all alike).

    CPU time (``time.process_time``) rather than wall time, so other processes competing for
    the cores do not count.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - start)
    return best


def bench_sync(num_envs: int, steps: int, repeats: int) -> None:
    name, make = _sub_env_factory()
    actions = np.random.default_rng(0).integers(0, 2, size=(steps, num_envs))
    envs = [make() for _ in range(num_envs)]
    vec = SyncVecEnv([make] * num_envs)
    dtype = envs[0].observation_space.dtype

    def bare() -> None:
        for i, env in enumerate(envs):
            env.reset(seed=i)
        for row in actions:
            observations, rewards, terminated, truncated, infos = [], [], [], [], []
            for env, action in zip(envs, row.tolist()):
                result = env.step(action)
                observation, info = result.observation, result.info
                if result.terminated or result.truncated:
                    reset = env.reset()
                    info = {
                        **info,
                        "final_observation": observation,
                        "final_info": info,
                        "reset_info": reset.info,
                    }
                    observation = reset.observation
                observations.append(observation)
                rewards.append(result.reward)
                terminated.append(result.terminated)
                truncated.append(result.truncated)
                infos.append(info)
            np.array(observations, dtype=dtype)  # the fastest way to stack small arrays
            np.array(rewards, dtype=np.float64)
            np.array(terminated, dtype=bool)
            np.array(truncated, dtype=bool)

    def vectorised() -> None:
        vec.reset(seed=list(range(num_envs)))
        for row in actions:
            vec.step(row)

    t_bare, t_vec = _best([bare, vectorised], repeats)
    print(f"SyncVecEnv, {num_envs} x {name}, {steps} steps (best of {repeats}):")
    print(f"  bare loop   {t_bare / steps * 1e6:8.1f} us/step")
    print(f"  SyncVecEnv  {t_vec / steps * 1e6:8.1f} us/step")
    print(f"  overhead    {100 * (t_vec / t_bare - 1):8.1f} %   (bar: <= 15 %)")
    vec.close()


# Wall time for both the hooks and the whole step (a CPU-time clock is a system call costing
# microseconds, which would distort the split); the best of several runs filters out load.
_clock = time.perf_counter


class _TimedDrift(DriftVecEnv):
    """DriftVecEnv whose hooks add their own time to ``hook_time``."""

    hook_time = 0.0

    def _reset_envs(self, indices: Any, options: Any) -> None:
        start = _clock()
        super()._reset_envs(indices, options)
        self.hook_time += _clock() - start

    def _observe(self) -> Any:
        start = _clock()
        out = super()._observe()
        self.hook_time += _clock() - start
        return out

    def _step(self, actions: Any) -> Any:
        start = _clock()
        out = super()._step(actions)
        self.hook_time += _clock() - start
        return out

    def _reset_infos(self, indices: Any) -> Any:
        start = _clock()
        out = super()._reset_infos(indices)
        self.hook_time += _clock() - start
        return out


def bench_native(num_envs: int, steps: int, repeats: int) -> None:
    actions = np.random.default_rng(0).integers(0, 2, size=(steps, num_envs))
    vec = _TimedDrift(num_envs, max_episode_steps=100)
    vec.reset(seed=0)
    for row in actions[:200]:  # warm up into the steady state (episodes ending every step)
        vec.step(row)
    best_total, best_share = float("inf"), 1.0
    for _ in range(repeats):
        vec.hook_time = 0.0
        start = _clock()
        for row in actions:
            vec.step(row)
        total = _clock() - start
        if total < best_total:
            best_total, best_share = total, 1.0 - vec.hook_time / total
    per_step = best_total / steps * 1e6
    print(f"\nDriftVecEnv, {num_envs} sub-envs, max_episode_steps=100, {steps} steps:")
    print(f"  step              {per_step:8.1f} us")
    print(f"  hooks             {per_step * (1 - best_share):8.1f} us")
    print(f"  base class        {per_step * best_share:8.1f} us")
    print(f"  base class share  {100 * best_share:8.1f} %   (bar: <= 30 %)")

    plain = DriftVecEnv(num_envs, max_episode_steps=100)
    plain.reset(seed=0)
    for row in actions[:200]:
        plain.step(row)
    profiler = cProfile.Profile()
    profiler.enable()
    for row in actions:
        plain.step(row)
    profiler.disable()
    stats = pstats.Stats(profiler)
    hooks = ("_step", "_observe", "_reset_envs", "_reset_infos")
    total = hook = 0.0
    for (filename, _, func), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if func == "step" and filename.endswith("native.py"):
            total += cumtime
        elif func in hooks and filename == _HOOKS_FILE:
            hook += cumtime
    print(
        f"  cProfile: step {total / steps * 1e6:.1f} us, hooks {hook / steps * 1e6:.1f} us, "
        f"base share {100 * (1 - hook / total):.1f} % (profiler overhead inflates calls)"
    )
    print("  cProfile breakdown (tottime, top 15):")
    stats.sort_stats("tottime").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sync-envs", type=positive_int, default=16)
    parser.add_argument("--native-envs", type=positive_int, default=4096)
    parser.add_argument("--steps", type=positive_int, default=1000)
    parser.add_argument("--repeats", type=positive_int, default=15)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 256 native envs, 50 steps, 1 repeat"
    )
    args, _ = parser.parse_known_args()  # nox -s bench passes its posargs to every script
    if args.quick:
        args.native_envs, args.steps, args.repeats = 256, 50, 1
    bench_sync(args.sync_envs, args.steps, args.repeats)
    bench_native(args.native_envs, args.steps, args.repeats)


if __name__ == "__main__":
    main()
