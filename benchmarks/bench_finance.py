"""Native finance envs: throughput against a bare-numpy step, SyncVecEnv and CartPole; memory.

Run: ``python benchmarks/bench_finance.py [--steps N] [--quick]``. All ratios come from one run.

1. Native ``Portfolio-v0`` at 1024 sub-envs against a bare-numpy step of the same market model
   (correlated GBM simulated online, the long-only rebalance with proportional costs, and the
   observation: the rolling window of log returns plus the weights). Bar: >= 40%.
2. The same ratio for native ``Trading-v0`` (one GBM asset, three positions). Bar: >= 40%.
3. Native ``Portfolio-v0`` throughput at 4096 sub-envs against 1024. Bar: not lower.
4. Native against ``SyncVecEnv`` of the same env at 1024 sub-envs. Bar: >= 100x. Printed with
   it, no bar: the same ratio for the bare-numpy step of 1. (the model with no env machinery at
   all) and for the step's irreducible numpy work (``FloorPortfolio``), the bound that no
   implementation of this model and observation built from NumPy array operations can pass.
5. A single ``Portfolio-v0`` against a single ``CartPole-v1`` (when sekai-classic is installed),
   both from ``sekai.make``. Bar: >= 0.5x.
6. Peak memory (tracemalloc: every numpy allocation) of native ``Portfolio-v0`` at 4096
   sub-envs over construction, reset and 260 steps (one autoreset of every sub-env).
   Bar: <= 120 MiB.
7. CPU-seconds per wall-second of native ``Portfolio-v0`` at 1024 sub-envs, in a fresh process
   (no BLAS state from the other sections), over 2520 steps (ten autoresets of every sub-env):
   the env must not keep a second core busy (BLAS threads woken by a tiny product spin).
   Bar: <= 1.1.

Actions are sampled before timing (a pool cycled through), as ``sekai bench`` does. The bare
and floor steps draw their normals as the native envs do (``sekai.finance._normals``), so that
a faster sampler in the env does not pass for less env overhead.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tracemalloc
from typing import Any

import numpy as np
from _args import positive_int
from _timing import Contender, interleaved, machine

import sekai
from sekai.envs.finance._helpers import random_correlation
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.finance._normals import NormalBlocks

MIB = 1024 * 1024


def _term_sum(x: np.ndarray) -> np.ndarray:
    """Sum over the first axis of an asset-major ``(k, num_envs)`` array, row by row."""
    total = x[0] + x[1]
    for row in range(2, x.shape[0]):
        total += x[row]
    return total


class BarePortfolio:
    """The Portfolio-v0 market and account as plain numpy, with no env machinery at all.

    The account is kept asset-major, ``(n + 1, num_envs)``, so that every per-asset term is
    a contiguous row (the fastest layout we know for short rows; the native env uses it too).
    """

    def __init__(self, num_envs: int, n: int = 5, lookback: int = 30, rate: float = 1e-3) -> None:
        dt = 1 / 252
        sigma = np.linspace(0.15, 0.35, n)
        self.drift = np.tile((0.06 - 0.5 * sigma**2) * dt, (num_envs, 1))
        corr = random_correlation(np.random.default_rng(0), n)
        self.chol_t = np.linalg.cholesky(corr).T * (sigma * np.sqrt(dt))
        self.rng = np.random.default_rng(0)
        self.normals = NormalBlocks()  # the native envs' sampler
        self.rate = rate
        self.lookback = lookback
        self.price = np.full((num_envs, n), 100.0)
        self.weights = np.zeros((n + 1, num_envs))
        self.weights[-1] = 1.0
        self.equity = np.ones(num_envs)
        self.capacity = 2 * lookback + 32
        self.buffer = np.zeros((num_envs, self.capacity, n), dtype=np.float32)
        self.head = lookback

    def step(self, actions: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        log_returns = self.normals.draw(self.rng, self.price.shape) @ self.chol_t
        log_returns += self.drift
        growth_assets = np.exp(log_returns)
        self.price = self.price * growth_assets
        r = growth_assets - 1.0
        target = actions.T.astype(np.float64, order="C")
        np.clip(target, 0.0, 1.0, out=target)
        target /= _term_sum(target)
        cost = self.rate * _term_sum(np.abs(target[:-1] - self.weights[:-1]))
        r_rows = np.ascontiguousarray(r.T)
        growth = (1.0 - cost) * (1.0 + _term_sum(target[:-1] * r_rows))
        r_rows += 1.0
        target[:-1] *= r_rows
        target /= _term_sum(target)
        self.weights = target
        self.equity = self.equity * growth
        reward = np.log(growth)
        if self.head == self.capacity:
            self.buffer[:, : self.lookback] = self.buffer[:, self.head - self.lookback :]
            self.head = self.lookback
        self.buffer[:, self.head] = log_returns
        self.head += 1
        window = self.buffer[:, self.head - self.lookback : self.head].copy()
        weights = np.ascontiguousarray(target.T, dtype=np.float32)
        return {"returns": window, "weights": weights}, reward


class FloorPortfolio:
    """What every Portfolio-v0 step at ``num_envs`` must do, and nothing else: draw the
    ``(num_envs, n)`` normals, exponentiate the log returns, write them into the rolling buffer
    and copy the observed window out of it (the observation is the caller's own array)."""

    def __init__(self, num_envs: int, n: int = 5, lookback: int = 30) -> None:
        self.rng = np.random.default_rng(0)
        self.normals = NormalBlocks()  # the native envs' sampler
        self.shape = (num_envs, n)
        self.lookback = lookback
        self.buffer = np.zeros((num_envs, 2 * lookback + 32, n), dtype=np.float32)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        log_returns = self.normals.draw(self.rng, self.shape) * 0.01
        growth = np.exp(log_returns)
        self.buffer[:, self.lookback] = log_returns
        return growth, self.buffer[:, 1 : self.lookback + 1].copy()


class BareTrading:
    """The Trading-v0 market and account as plain numpy."""

    def __init__(self, num_envs: int, lookback: int = 30, rate: float = 1e-3) -> None:
        dt = 1 / 252
        self.drift = (0.05 - 0.5 * 0.2**2) * dt
        self.vol = 0.2 * np.sqrt(dt)
        self.rng = np.random.default_rng(0)
        self.normals = NormalBlocks()  # the native envs' sampler
        self.rate = rate
        self.positions = np.array([-1.0, 0.0, 1.0])
        self.lookback = lookback
        self.price = np.full(num_envs, 100.0)
        self.position = np.zeros(num_envs)
        self.equity = np.ones(num_envs)
        self.capacity = 2 * lookback + 32
        self.buffer = np.zeros((num_envs, self.capacity), dtype=np.float32)
        self.head = lookback

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        log_returns = self.normals.draw(self.rng, self.price.shape) * self.vol + self.drift
        growth_asset = np.exp(log_returns)
        self.price = self.price * growth_asset
        r = growth_asset - 1.0
        target = self.positions[actions]
        cost = self.rate * np.abs(target - self.position)
        held = 1.0 + target * r
        growth = (1.0 - cost) * held
        self.position = target * (1.0 + r) / held
        self.equity = self.equity * growth
        reward = np.log(growth)
        if self.head == self.capacity:
            self.buffer[:, : self.lookback] = self.buffer[:, self.head - self.lookback :]
            self.head = self.lookback
        self.buffer[:, self.head] = log_returns
        self.head += 1
        obs = np.empty((self.price.shape[0], self.lookback + 1), dtype=np.float32)
        obs[:, :-1] = self.buffer[:, self.head - self.lookback : self.head]
        obs[:, -1] = self.position
        return obs, reward


def _portfolio_actions(num_envs: int, count: int = 16) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.random((num_envs, 6), dtype=np.float32) for _ in range(count)]


def _trading_actions(num_envs: int, count: int = 16) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.integers(0, 3, num_envs) for _ in range(count)]


def native(cls: type, num_envs: int, actions: list[Any]) -> tuple[Any, Contender]:
    vec = cls(num_envs)
    vec.reset(seed=0)
    return vec, (vec.step, actions, num_envs)


def single(env_id: str) -> Contender:
    """``sekai.make(env_id)`` stepped with pre-sampled actions, reset when an episode ends."""
    env = sekai.make(env_id)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(64)]
    done = [False]

    def step(action: Any) -> None:
        if done[0]:
            env.reset()
        result = env.step(action)
        done[0] = result.terminated or result.truncated

    return step, actions, 1


def peak_memory(num_envs: int, steps: int) -> float:
    """Peak traced allocation (MiB) of a native Portfolio-v0 over build, reset and steps."""
    actions = _portfolio_actions(num_envs, 4)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        vec = PortfolioVecEnv(num_envs)
        vec.reset(seed=0)
        for i in range(steps):
            vec.step(actions[i % len(actions)])
        _, peak = tracemalloc.get_traced_memory()
        vec.close()
    finally:
        tracemalloc.stop()
    return peak / MIB


_CPU_PER_WALL = """
import json, sys, time
import numpy as np
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
n, steps = int(sys.argv[1]), int(sys.argv[2])
vec = PortfolioVecEnv(n)
vec.reset(seed=0)
rng = np.random.default_rng(1)
actions = [rng.random((n, 6), dtype=np.float32) for _ in range(16)]
for i in range(100):
    vec.step(actions[i % 16])
cpu, wall = time.process_time(), time.perf_counter()
for i in range(steps):
    vec.step(actions[i % 16])
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps([cpu / wall, steps * n / wall]))
"""


def cpu_per_wall(num_envs: int, steps: int) -> tuple[float, float]:
    """CPU-seconds per wall-second (every thread of the process) and steps/s of a native
    Portfolio-v0 stepped in a fresh interpreter."""
    run = subprocess.run(
        [sys.executable, "-c", _CPU_PER_WALL, str(num_envs), str(steps)],
        capture_output=True,
        text=True,
        check=True,
    )
    ratio, rate = json.loads(run.stdout)
    return float(ratio), float(rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=positive_int, default=1200, help="timed steps per measurement"
    )
    parser.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    args, _ = parser.parse_known_args()  # nox -s bench passes its posargs to every script
    rows: list[tuple[str, str, str, bool | None]] = []
    print(machine(), flush=True)

    def row(name: str, value: str, bar: str, ok: bool | None) -> None:
        rows.append((name, value, bar, ok))
        verdict = "" if ok is None else ("ok" if ok else "BELOW BAR")
        print(f"{name:<52} {value:>18}  {bar:<10} {verdict}", flush=True)

    n = 1024
    chunk, rounds = (5, 3) if args.quick else (20, max(args.steps // 20, 3))

    bare = BarePortfolio(n)
    vec, contender = native(PortfolioVecEnv, n, _portfolio_actions(n))
    rates = interleaved(
        {"bare": (bare.step, _portfolio_actions(n), n), "native": contender}, chunk, rounds
    )
    native_1024 = rates["native"]
    row("bare-numpy Portfolio step, 1024 envs (steps/s)", f"{rates['bare']:,.0f}", "", None)
    row("native Portfolio-v0, 1024 envs (steps/s)", f"{native_1024:,.0f}", "", None)
    share = native_1024 / rates["bare"]
    row("  native / bare-numpy", f"{share:.0%}", ">= 40%", share >= 0.4)

    bare_t = BareTrading(n)
    vec_t, contender_t = native(TradingVecEnv, n, _trading_actions(n))
    rates = interleaved(
        {"bare": (bare_t.step, _trading_actions(n), n), "native": contender_t}, chunk, rounds
    )
    vec_t.close()
    row("bare-numpy Trading step, 1024 envs (steps/s)", f"{rates['bare']:,.0f}", "", None)
    row("native Trading-v0, 1024 envs (steps/s)", f"{rates['native']:,.0f}", "", None)
    share_t = rates["native"] / rates["bare"]
    row("  native / bare-numpy", f"{share_t:.0%}", ">= 40%", share_t >= 0.4)

    big, contender_big = native(PortfolioVecEnv, 4096, _portfolio_actions(4096))
    rates = interleaved({"1024": contender, "4096": contender_big}, chunk, rounds)
    big.close()
    row("native Portfolio-v0, 1024 envs (steps/s)", f"{rates['1024']:,.0f}", "", None)
    row("native Portfolio-v0, 4096 envs (steps/s)", f"{rates['4096']:,.0f}", "", None)
    scale = rates["4096"] / rates["1024"]
    row("  4096 / 1024", f"{scale:.2f}x", ">= 1x", scale >= 1.0)

    sync = sekai.make_vec("Portfolio-v0", n, vectorization_mode="sync")
    sync.reset(seed=0)
    floor = FloorPortfolio(n)
    rates = interleaved(
        {
            "sync": (sync.step, _portfolio_actions(n, 4), n),
            "native": contender,
            "bare": (BarePortfolio(n).step, _portfolio_actions(n), n),
            "floor": (floor.step, _portfolio_actions(n, 1), n),
        },
        chunk,
        3 if args.quick else 30,  # sync's cache-bound step varies most on a shared machine
        chunks={"sync": 1},
    )
    sync.close()
    vec.close()
    row("SyncVecEnv Portfolio-v0, 1024 envs (steps/s)", f"{rates['sync']:,.0f}", "", None)
    row("native Portfolio-v0, 1024 envs (steps/s)", f"{rates['native']:,.0f}", "", None)
    speedup = rates["native"] / rates["sync"]
    row("  native / sync", f"{speedup:.0f}x", ">= 100x", speedup >= 100)
    row("bare-numpy Portfolio step, 1024 envs (steps/s)", f"{rates['bare']:,.0f}", "", None)
    bare_ratio = rates["bare"] / rates["sync"]
    row("  bare-numpy / sync (no bar: no env machinery)", f"{bare_ratio:.0f}x", "", None)
    row("normals + exp + window copy only, 1024 envs", f"{rates['floor']:,.0f}", "", None)
    bound = rates["floor"] / rates["sync"]
    row("  that floor / sync (no bar: the bound)", f"{bound:.0f}x", "", None)
    row("  native / that floor", f"{rates['native'] / rates['floor']:.0%}", "", None)

    contenders = {"Portfolio-v0": single("Portfolio-v0")}
    try:
        contenders["CartPole-v1"] = single("CartPole-v1")
    except Exception as exc:  # sekai-classic missing or not written yet
        row("single CartPole-v1", f"unavailable ({type(exc).__name__})", "", None)
    rates = interleaved(contenders, 100, 20 if args.quick else 200)
    row("single Portfolio-v0 (sekai.make, steps/s)", f"{rates['Portfolio-v0']:,.0f}", "", None)
    if "CartPole-v1" in rates:
        cartpole = rates["CartPole-v1"]
        row("single CartPole-v1 (sekai.make, steps/s)", f"{cartpole:,.0f}", "", None)
        ratio = rates["Portfolio-v0"] / cartpole
        row("  Portfolio / CartPole", f"{ratio:.2f}x", ">= 0.5x", ratio >= 0.5)

    peak = peak_memory(4096, 260)
    row("peak memory, native Portfolio-v0, 4096 envs (MiB)", f"{peak:.1f}", "<= 120", peak <= 120)

    ratio, rate = cpu_per_wall(n, 504 if args.quick else 2520)
    row("native Portfolio-v0, 1024 envs, fresh process (steps/s)", f"{rate:,.0f}", "", None)
    row("  CPU-seconds per wall-second", f"{ratio:.2f}", "<= 1.1", ratio <= 1.1)

    failed = [name for name, _, _, ok in rows if ok is False]
    print("all bars met" if not failed else f"{len(failed)} bar(s) not met", flush=True)


if __name__ == "__main__":
    main()
