"""RayVecEnv against ProcVecEnv and SyncVecEnv with a CPU-bound env; Ray's per-round-trip cost.

Run (Linux, as root or with unprivileged user namespaces, after ``pip install -e
packages/sekai-ray``)::

    packages/sekai-ray/tests/run-in-netns.sh python benchmarks/bench_ray.py [--steps N] [--json]

The wrapper keeps the local Ray cluster inside a network namespace that only has loopback; the
script refuses to start Ray elsewhere unless given ``--host-network`` (RayVecEnv's local cluster
listens on 127.0.0.1 either way). Without sekai-ray installed it says so and exits 0, so the
``bench`` session's run of every script stays green.

1. CPU-bound: 8 sub-envs whose step burns ``--cost-ms`` (1 ms) of CPU: ``sync``, ``proc`` with 2
   workers and ``ray`` with 2 actors, in the same run. Each parallel backend runs 4 sub-envs per
   worker, so with 2 free cores its ideal is twice sync's rate. Rates are env steps per second
   (VecEnv calls x 8 sub-envs, as every benchmark counts them); times are per VecEnv call.
2. Round trip: 1 sub-env whose step costs nothing, on 1 worker: the time of a step is the
   backend's per-round-trip overhead (sync: the bare VecEnv overhead, for reference).

Actions are sampled up front; the contenders run alternately and each one's best repeat counts,
so a busy machine disturbs all of them alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _args import positive_int

import sekai
from sekai.vector import SyncVecEnv, VecEnv

CPU_ENVS, CPU_WORKERS = 8, 2  # the CPU-bound row's sub-envs and workers


class BusyEnv(sekai.Env):  # type: ignore[type-arg]
    """A step burns ``cost`` seconds of this thread's CPU time (a stand-in for a simulator)."""

    def __init__(self, cost: float) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(8,))
        self.action_space = sekai.Discrete(2)
        self.cost = cost
        self._obs = np.zeros(8, dtype=np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(self._obs.copy(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        end = time.thread_time() + self.cost
        while time.thread_time() < end:
            pass
        return sekai.StepResult(self._obs.copy(), 1.0, False, False, {})


def _factories(n: int, cost: float) -> list[Callable[[], BusyEnv]]:
    return [lambda: BusyEnv(cost)] * n


def _builders(n: int, workers: int, cost: float) -> dict[str, Callable[[], VecEnv]]:
    builders: dict[str, Callable[[], VecEnv]] = {"sync": lambda: SyncVecEnv(_factories(n, cost))}
    try:
        from sekai.vector import ProcVecEnv
    except (ImportError, AttributeError):
        print("(ProcVecEnv is not available: proc is left out)")
    else:
        builders["proc"] = lambda: ProcVecEnv(_factories(n, cost), num_workers=workers)
    from sekai.ray import RayVecEnv

    builders["ray"] = lambda: RayVecEnv(_factories(n, cost), num_workers=workers)
    return builders


def _time_steps(vec: VecEnv, actions: np.ndarray) -> float:
    """Seconds per step over ``actions`` (one row per step)."""
    step = vec.step
    start = time.perf_counter()
    for row in actions:
        step(row)
    return (time.perf_counter() - start) / len(actions)


def _measure(n: int, workers: int, cost: float, steps: int, repeats: int) -> dict[str, float]:
    """Best seconds per step of each backend, the backends taking turns."""
    vecs = {name: build() for name, build in _builders(n, workers, cost).items()}
    actions = np.random.default_rng(0).integers(0, 2, size=(steps, n))
    best = dict.fromkeys(vecs, float("inf"))
    try:
        for vec in vecs.values():
            vec.reset(seed=0)
            _time_steps(vec, actions[: max(1, steps // 10)])  # warm up
        for _ in range(repeats):
            for name, vec in vecs.items():
                best[name] = min(best[name], _time_steps(vec, actions))
    finally:
        for vec in vecs.values():
            vec.close()
    return best


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # sekai's hint for a first-party module that is not installed
        return False


def _loopback_only() -> bool:
    return {name for _, name in socket.if_nameindex()} <= {"lo"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=positive_int, default=300, help="steps per repeat (default 300)"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="repeats per backend (default 3)"
    )
    parser.add_argument("--cost-ms", type=float, default=1.0, help="CPU ms per env step")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--host-network", action="store_true", help="allow Ray outside a loopback-only netns"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 30 steps, 1 repeat")
    args, _ = parser.parse_known_args(argv)  # nox -s bench passes its posargs to every script
    if args.quick:
        args.steps, args.repeats = 30, 1
    # find_spec, not import: RayVecEnv's local-cluster settings apply before Ray's first import.
    if not (_installed("ray") and _installed("sekai.ray")):
        print("bench_ray: sekai-ray (and Ray) are not installed here: nothing to measure.")
        return 0
    if not _loopback_only() and not args.host_network:
        print(
            "bench_ray: run it inside a loopback-only network namespace: "
            "packages/sekai-ray/tests/run-in-netns.sh python benchmarks/bench_ray.py "
            "(or pass --host-network)",
            file=sys.stderr,
        )
        return 2
    from sekai.ray._cluster import connect

    load, cores = os.getloadavg(), os.cpu_count() or 1
    started = time.perf_counter()
    ray = connect(None)
    init_s = time.perf_counter() - started
    cost = args.cost_ms / 1000
    cpu = _measure(CPU_ENVS, CPU_WORKERS, cost, args.steps, args.repeats)
    trip = _measure(1, 1, 0.0, args.steps * 3, args.repeats)
    ray.shutdown()

    report = {
        "load_average": [load[0], os.getloadavg()[0]],
        "cpu_count": cores,
        "ray_init_s": init_s,
        "cpu_bound": {
            "num_envs": CPU_ENVS,
            "workers": CPU_WORKERS,
            "cost_ms": args.cost_ms,
            "env_steps_per_s": {name: CPU_ENVS / s for name, s in cpu.items()},
            "ms_per_call": {name: s * 1000 for name, s in cpu.items()},
        },
        "round_trip_ms": {name: s * 1000 for name, s in trip.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Ray local cluster started in {init_s:.1f} s")
    print(
        f"\n{CPU_ENVS} sub-envs x {args.cost_ms:g} ms of CPU per step, {CPU_WORKERS} workers "
        "(env steps/s; ms per VecEnv call; x sync)"
    )
    for name, seconds in cpu.items():
        print(
            f"  {name:5s} {CPU_ENVS / seconds:8.1f} steps/s  {seconds * 1000:7.2f} ms/call  "
            f"x{cpu['sync'] / seconds:.2f}"
        )
    print("\nround trip: 1 sub-env with a free step, 1 worker (ms per step)")
    for name, seconds in trip.items():
        print(f"  {name:5s} {seconds * 1000:7.3f} ms")
    work = CPU_ENVS * cost / CPU_WORKERS
    print(
        f"\nper step, each worker has {work * 1000:.2f} ms of env work: on two free cores expect "
        f"about {(work + trip.get('proc', 0.0)) * 1000:.2f} ms (proc) and "
        f"{(work + trip['ray']) * 1000:.2f} ms (ray), against "
        f"{CPU_ENVS * cost * 1000:.2f} ms (sync)"
    )
    print(f"load average before / after: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on {cores} cores")
    if max(load[0], os.getloadavg()[0]) > cores / 2:
        print(
            "  (busy machine: other processes take the cores, so the parallel figures are noise; "
            "the round trips hold up better)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
