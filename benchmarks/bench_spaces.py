"""Benchmark sekai's space hot paths against gymnasium's on the same spaces.

Run: ``python benchmarks/bench_spaces.py`` (needs gymnasium 1.x). Each case is timed with
``timeit`` (best of several repeats) and the ratio gymnasium/sekai is printed: above 1.0x
means sekai is faster.
"""

from __future__ import annotations

import argparse
import timeit
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from _args import positive_int

import sekai
from sekai import spaces as sk

try:
    import gymnasium as gym
except ImportError as exc:  # pragma: no cover - a benchmark-only dependency
    raise SystemExit("bench_spaces.py needs gymnasium: pip install 'gymnasium>=1.1'") from exc

CARTPOLE_HIGH = np.array([4.8, np.inf, 0.41887903, np.inf], dtype=np.float32)


def _cases() -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """``(name, sekai call, gymnasium call)`` on equal spaces and inputs."""
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = []

    ours_cp = sk.Box(-CARTPOLE_HIGH, CARTPOLE_HIGH)
    gym_cp = gym.spaces.Box(-CARTPOLE_HIGH, CARTPOLE_HIGH, dtype=np.float32)
    obs = np.array([0.01, -0.2, 0.03, 0.3], dtype=np.float32)
    cases.append(
        ("Box.contains CartPole obs", lambda: ours_cp.contains(obs), lambda: gym_cp.contains(obs))
    )

    img_ours = sk.Box(0, 255, shape=(84, 84, 3), dtype=np.uint8)
    img_gym = gym.spaces.Box(0, 255, shape=(84, 84, 3), dtype=np.uint8)
    img = np.zeros((84, 84, 3), dtype=np.uint8)
    cases.append(
        (
            "Box.contains 84x84x3 uint8",
            lambda: img_ours.contains(img),
            lambda: img_gym.contains(img),
        )
    )

    unit_ours = sk.Box(0.0, 1.0, shape=(64, 64))
    unit_gym = gym.spaces.Box(0.0, 1.0, shape=(64, 64))
    unit = np.full((64, 64), 0.5, dtype=np.float32)
    cases.append(
        (
            "Box.contains 64x64 float32 in [0, 1]",
            lambda: unit_ours.contains(unit),
            lambda: unit_gym.contains(unit),
        )
    )

    ours_cp.seed(0)
    gym_cp.seed(0)
    cases.append(("Box.sample CartPole (mixed bounds)", ours_cp.sample, gym_cp.sample))

    act_ours = sk.Box(-1.0, 1.0, shape=(6,), seed=0)
    act_gym = gym.spaces.Box(-1.0, 1.0, shape=(6,), seed=0)
    cases.append(("Box.sample (-1, 1, (6,))", act_ours.sample, act_gym.sample))

    mask = np.array([1, 0, 1, 1, 0], dtype=np.int8)  # gymnasium's mask dtype
    masked_ours, masked_gym = sk.Discrete(5), gym.spaces.Discrete(5)
    cases.append(
        (
            "Discrete.sample(mask) (5 actions)",
            lambda: masked_ours.sample(mask),
            lambda: masked_gym.sample(mask),
        )
    )

    d_ours = sk.Dict(pos=sk.Box(-1.0, 1.0, shape=(2,)), k=sk.Discrete(3))
    d_gym = gym.spaces.Dict(
        {"pos": gym.spaces.Box(-1.0, 1.0, shape=(2,)), "k": gym.spaces.Discrete(3)}
    )
    x = {"pos": np.array([0.5, -0.5], dtype=np.float32), "k": np.int64(1)}
    cases.append(
        (
            "flatten Dict(pos, k)",
            lambda: sk.flatten(d_ours, x),
            lambda: gym.spaces.flatten(d_gym, x),
        )
    )

    big_ours = sk.Dict(
        prices=sk.Box(0.0, np.inf, shape=(32, 4)),
        position=sk.Box(-1.0, 1.0, shape=(1,)),
        cash=sk.Box(0.0, np.inf, shape=(1,)),
        regime=sk.Discrete(4),
        flags=sk.MultiBinary(8),
    )
    big_gym = gym.spaces.Dict(
        {
            "prices": gym.spaces.Box(0.0, np.inf, shape=(32, 4)),
            "position": gym.spaces.Box(-1.0, 1.0, shape=(1,)),
            "cash": gym.spaces.Box(0.0, np.inf, shape=(1,)),
            "regime": gym.spaces.Discrete(4),
            "flags": gym.spaces.MultiBinary(8),
        }
    )
    big_ours.seed(0)
    bx = big_ours.sample()
    cases.append(
        (
            "flatten Dict(5 entries, 141 dims)",
            lambda: sk.flatten(big_ours, bx),
            lambda: gym.spaces.flatten(big_gym, bx),
        )
    )
    return cases


def _best_pair(
    ours: Callable[[], Any], theirs: Callable[[], Any], number: int, repeat: int
) -> tuple[float, float]:
    """Best per-call time of each, measured in alternation so load changes hit both alike."""
    best_ours = best_theirs = float("inf")
    for _ in range(repeat):
        best_ours = min(best_ours, timeit.timeit(ours, number=number))
        best_theirs = min(best_theirs, timeit.timeit(theirs, number=number))
    return best_ours / number, best_theirs / number


def main(argv: list[str] | None = None) -> list[tuple[str, float, float]]:
    """Time every case and print a table of per-call times and gymnasium/sekai ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=positive_int, default=20_000, help="calls per repeat")
    parser.add_argument("--repeat", type=positive_int, default=7, help="repeats (the best is kept)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 calls, 1 repeat")
    args, _ = parser.parse_known_args(argv)  # nox -s bench passes its posargs to every script
    if args.quick:
        args.number, args.repeat = 200, 1
    warnings.simplefilter("ignore")  # gymnasium's precision warnings are not what we time
    print(f"sekai {sekai.__version__} vs gymnasium {gym.__version__}, numpy {np.__version__}")
    print(f"best of {args.repeat} x {args.number} calls\n")
    header = f"{'case':<36} {'sekai':>10} {'gymnasium':>10} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    rows = []
    for name, ours, theirs in _cases():
        ours()
        theirs()
        t_ours, t_gym = _best_pair(ours, theirs, args.number, args.repeat)
        rows.append((name, t_ours, t_gym))
        print(f"{name:<36} {t_ours * 1e6:>8.2f}us {t_gym * 1e6:>8.2f}us {t_gym / t_ours:>6.2f}x")
    return rows


if __name__ == "__main__":
    main()
