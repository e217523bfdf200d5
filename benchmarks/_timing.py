"""Interleaved best-of-chunks timing, shared by the finance benchmarks.

On a shared virtual machine the CPU runs at full speed and at about half of it in turns that
last from milliseconds to a second (time stolen by the host). Long timed runs average both;
short chunks, alternated between the contenders and many of them, let the best chunk of each
be an undisturbed one, and a ratio of two bests compares the contenders at the same speed.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["WARM_UP", "Contender", "interleaved", "machine"]

# (step(action), actions cycled through, env steps per call)
Contender = tuple[Callable[[Any], Any], list[Any], int]

WARM_UP = 0.005  # seconds of untimed steps before each timed chunk (see interleaved)


def interleaved(
    contenders: dict[str, Contender],
    chunk: int,
    rounds: int,
    chunks: dict[str, int] | None = None,
) -> dict[str, float]:
    """Env steps per second of each contender: the best of ``rounds`` chunks of ``chunk`` steps.

    The contenders take turns chunk by chunk, so a load spike on the (shared) machine hits
    them alike, and the best chunk is the least disturbed one. Before each chunk the contender
    runs untimed for ``WARM_UP`` seconds (one step at least): on a virtual machine a
    contender runs slower for the first milliseconds after another one ran or the CPU idled.
    Measured: native Portfolio's steps after one SyncVecEnv step took (median of 40) 498,
    218, 189, 164 us, then ~145 us; after a 17 ms sleep 748, 351, 313, 258, ..., ~170 us.
    One untimed step left most of that ramp inside the timed chunk, and so measured the fast
    contender below its steady state. ``chunks`` overrides the chunk length per contender (a
    slow contender needs fewer steps per chunk).
    """
    sizes = {name: (chunks or {}).get(name, chunk) for name in contenders}
    for step, actions, _ in contenders.values():  # warm-up
        for i in range(3):
            step(actions[i % len(actions)])
    best = dict.fromkeys(contenders, 0.0)
    for _ in range(rounds):
        for name, (step, actions, per_step) in contenders.items():
            size = sizes[name]
            warm_until = time.perf_counter() + WARM_UP
            step(actions[0])  # untimed: back to this contender's steady state
            while time.perf_counter() < warm_until:
                step(actions[0])
            start = time.perf_counter()
            for i in range(size):
                step(actions[i % len(actions)])
            best[name] = max(best[name], size * per_step / (time.perf_counter() - start))
    return best


def machine() -> str:
    """One line naming the CPU, its cores and NumPy's SIMD extensions: the ratios depend on
    them (NumPy's float64 ``exp`` and integer conversions are vectorised with AVX-512 only)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            names = [
                line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")
            ]
        model = names[0] if names else model
    except OSError:
        pass
    simd = np.show_config(mode="dicts").get("SIMD Extensions", {})
    found = " ".join(simd.get("baseline", []) + simd.get("found", [])) or "unknown"
    missing = " ".join(simd.get("not found", []))
    without = f" (not {missing})" if missing else ""
    return (
        f"machine: {model}, {os.cpu_count()} cores; NumPy {np.__version__}, SIMD {found}{without}"
    )
