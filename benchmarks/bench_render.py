"""Benchmark rendering: frames per second of the finance renderers and the canvas primitives.

Run: ``python benchmarks/bench_render.py`` (``--quick`` for a smoke run). Each finance env plays
one seeded episode with random actions, and the renderer draws a frame after every step; the
figure is the best of ``--repeats`` timed episodes (frames per second, drawing only). The canvas
rows time one primitive (a marker triangle, a line of text, a 2-pixel line) on a 600x400 canvas,
best of ``--repeats`` batches, in microseconds per call.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from _args import positive_int

import sekai
from sekai.envs.finance import (
    LimitOrderBookRenderer,
    MarketMakingRenderer,
    PortfolioRenderer,
    TradingRenderer,
)
from sekai.rendering import Canvas

RENDERERS: dict[str, tuple[Callable[[], Any], dict[str, Any]]] = {
    "Trading-v0": (TradingRenderer, {"episode_length": 120}),
    "Portfolio-v0": (PortfolioRenderer, {"episode_length": 120}),
    "MarketMaking-v0": (MarketMakingRenderer, {}),
    "LimitOrderBook-v0": (LimitOrderBookRenderer, {}),
}


def frames_per_second(env_id: str, steps: int, repeats: int) -> float:
    """The best of ``repeats`` seeded episodes of at most ``steps`` frames each."""
    make_renderer, kwargs = RENDERERS[env_id]
    best = 0.0
    for _ in range(repeats):
        env = sekai.make(env_id, **kwargs)
        renderer = make_renderer()
        env.action_space.seed(0)
        env.reset(seed=0)
        renderer.render(env)  # untimed: the first frame sets the layout up
        drawn, spent = 0, 0.0
        for _ in range(steps):
            result = env.step(env.action_space.sample())
            start = time.perf_counter()
            renderer.render(env)
            spent += time.perf_counter() - start
            drawn += 1
            if result.done:
                break
        env.close()
        best = max(best, drawn / spent)
    return best


def primitive_microseconds(draw: Callable[[Canvas, int], None], calls: int, repeats: int) -> float:
    """The best of ``repeats`` batches of ``calls`` draws, in microseconds per call."""
    best = float("inf")
    for _ in range(repeats):
        canvas = Canvas(600, 400)
        start = time.perf_counter()
        for i in range(calls):
            draw(canvas, i)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


PRIMITIVES: dict[str, Callable[[Canvas, int], None]] = {
    "polygon (marker triangle)": lambda c, i: c.polygon(
        [
            (50 + i % 500, 45 + i % 300),
            (45.6 + i % 500, 53 + i % 300),
            (54.4 + i % 500, 53 + i % 300),
        ],
        (20, 200, 30),
    ),
    "text (6 characters)": lambda c, i: c.text(10, 10 + i % 300, "1.2345", (0, 0, 0)),
    "line (2 px, 40 px long)": lambda c, i: c.line(
        (10, 10 + i % 300), (50, 30 + i % 300), (0, 0, 200), width=2.0
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=120, help="frames per episode")
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 frames, 1 repeat")
    args, _ = parser.parse_known_args()  # nox -s bench passes its posargs to every script
    steps, repeats, calls = (5, 1, 50) if args.quick else (args.steps, args.repeats, 2000)
    print(f"{'renderer':<24}{'frames/s':>10}")
    for env_id in RENDERERS:
        print(f"{env_id:<24}{frames_per_second(env_id, steps, repeats):>10.1f}")
    print(f"\n{'canvas primitive':<28}{'us/call':>8}")
    for name, draw in PRIMITIVES.items():
        print(f"{name:<28}{primitive_microseconds(draw, calls, repeats):>8.0f}")


if __name__ == "__main__":
    main()
