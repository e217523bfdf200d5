"""Classic control against gymnasium: steps per second and ratios (the targets: all >= 1.0).

Run: ``python benchmarks/bench_classic.py [--steps N] [--repeats R] [--json] [--quick]``.

1. One env of each classic id (``CartPole-v1``, ``Acrobot-v1``, ``MountainCar-v0``,
   ``MountainCarContinuous-v0``, ``Pendulum-v1``): ``sekai.make`` against ``gym.make`` (both
   with their registered wrappers), resetting after each episode.
2. ``SyncVecEnv`` x16 against gymnasium's ``SyncVectorEnv`` x16 of ``CartPole-v1``, gymnasium in
   its same-step autoreset mode (sekai's behaviour: a finished sub-env is reset in the call
   that finished it; gymnasium's default would spend the next call on the reset alone, no
   physics step, and count it as an env step).
3. The native ``CartPoleVecEnv`` against gymnasium's own ``CartPoleVectorEnv`` at 1024 and 4096
   sub-envs (both truncate at 500 steps and reset finished sub-envs themselves).

Actions are sampled up front and shared by both sides; the contenders run alternately, and each
one's best repeat counts, so a busy machine disturbs both alike.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from _args import positive_int
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

import sekai
from sekai.envs.classic_control import CartPoleVecEnv

# The single-env rows: every classic id, so a slow step of any of them shows.
SINGLE_IDS = (
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
)


def _single_actions(env_id: str, steps: int) -> list[Any]:
    """``steps`` actions of ``env_id``'s space: Python ints for Discrete, float32 arrays for Box."""
    space = gym.make(env_id).action_space
    space.seed(0)
    actions = [space.sample() for _ in range(steps)]
    return [int(a) for a in actions] if isinstance(space, gym.spaces.Discrete) else actions


def _single_sekai(env_id: str, actions: list[Any]) -> Callable[[], None]:
    env = sekai.make(env_id)
    env.reset(seed=0)
    step, reset = env.step, env.reset

    def run() -> None:
        for action in actions:
            if step(action).done:
                reset()

    return run


def _single_gym(env_id: str, actions: list[Any]) -> Callable[[], None]:
    env = gym.make(env_id)
    env.reset(seed=0)
    step, reset = env.step, env.reset

    def run() -> None:
        for action in actions:
            _, _, terminated, truncated, _ = step(action)
            if terminated or truncated:
                reset()

    return run


def _vector_run(vec: Any, actions: np.ndarray) -> Callable[[], None]:
    vec.reset(seed=0)
    step = vec.step

    def run() -> None:
        for batch in actions:
            step(batch)

    return run


def sync_pair(n: int) -> tuple[Any, Any]:
    """sekai's and gymnasium's ``SyncVecEnv`` x``n`` of ``CartPole-v1``, doing the same work.

    sekai's vector envs reset a finished sub-env in the call that finished it. gymnasium's
    default (next-step autoreset) spends the following call on the reset alone, with no physics
    step, and that call would still count as an env step: its same-step mode matches sekai's.
    """
    ours = sekai.make_vec("CartPole-v1", n, vectorization_mode="sync")
    theirs = gym.make_vec(
        "CartPole-v1",
        n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )
    return ours, theirs


def _measure(
    contenders: dict[str, Callable[[], None]], repeats: int, steps: int
) -> dict[str, float]:
    """Best steps/s of each contender over ``repeats`` alternating runs of ``steps`` env steps."""
    best = dict.fromkeys(contenders, 0.0)
    for run in contenders.values():
        run()  # warm-up
    for _ in range(repeats):
        for name, run in contenders.items():
            start = time.perf_counter()
            run()
            best[name] = max(best[name], steps / (time.perf_counter() - start))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=positive_int, default=20_000, help="single-env steps per run"
    )
    parser.add_argument("--repeats", type=positive_int, default=5, help="runs per contender")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 500 steps, 1 repeat")
    args, _ = parser.parse_known_args(argv)  # the nox session passes its posargs to every script
    if args.quick:
        args.steps, args.repeats = 500, 1

    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []

    def compare(label: str, sekai_run: Any, gym_run: Any, env_steps: int) -> None:
        result = _measure({"sekai": sekai_run, "gymnasium": gym_run}, args.repeats, env_steps)
        rows.append(
            {
                "benchmark": label,
                "sekai_steps_per_s": result["sekai"],
                "gymnasium_steps_per_s": result["gymnasium"],
                "ratio": result["sekai"] / result["gymnasium"],
            }
        )

    for env_id in SINGLE_IDS:
        actions = _single_actions(env_id, args.steps)
        sekai_run, gym_run = _single_sekai(env_id, actions), _single_gym(env_id, actions)
        compare(f"{env_id}, one env", sekai_run, gym_run, args.steps)

    n = 16
    batches = rng.integers(0, 2, size=(max(args.steps // n, 1), n))
    sekai_sync, gym_sync = sync_pair(n)
    compare(
        f"CartPole-v1, sync x{n}, same-step reset",
        _vector_run(sekai_sync, batches),
        _vector_run(gym_sync, batches),
        batches.size,
    )
    sekai_sync.close()
    gym_sync.close()

    for n in (1024, 4096):
        batches = rng.integers(0, 2, size=(max(args.steps * 10 // n, 20), n))
        native = CartPoleVecEnv(n, max_episode_steps=500)
        gym_native = CartPoleVectorEnv(num_envs=n, max_episode_steps=500)
        compare(
            f"CartPole-v1, native x{n}",
            _vector_run(native, batches),
            _vector_run(gym_native, batches),
            batches.size,
        )
        native.close()
        gym_native.close()

    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'benchmark':<40} {'sekai steps/s':>15} {'gymnasium steps/s':>18} {'ratio':>7}")
    for row in rows:
        print(
            f"{row['benchmark']:<40} {row['sekai_steps_per_s']:>15,.0f} "
            f"{row['gymnasium_steps_per_s']:>18,.0f} {row['ratio']:>7.2f}"
        )
    worst = min(row["ratio"] for row in rows)
    print(f"lowest ratio {worst:.2f} (target >= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
