"""MarketMaking-v0 and OptimalExecution-v0: native vector envs against a bare-numpy step.

Run: ``python benchmarks/bench_finance_mm_oe.py [--num-envs 1024] [--chunk 20] [--rounds 60]``.

For each env, the bare-numpy reference advances ``num_envs`` copies of the same model with
hand-written array code: draw the randoms, apply the action, update the state, compute the
reward, build the float32 observation and restart the finished copies (the native env's
autoreset). The native env runs ``vec.step(actions)`` on the same pre-sampled random actions.
The bar is native >= 40 % of the bare step's throughput at 1024 sub-envs. A single
env and a SyncVecEnv of 16 sub-envs are timed for reference. Each rate is the best of many
short chunks, alternated between the contenders (``_timing.interleaved``).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
from _args import positive_int
from _timing import interleaved, machine

import sekai
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv


class BareMarketMaking:
    """MarketMaking-v0's step for ``n`` copies in plain numpy (the reference)."""

    def __init__(self, n: int, seed: int = 0) -> None:
        env = MarketMakingEnv()
        self.p = env
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.mid = np.full(n, env.s0)
        self.q = np.zeros(n, np.int64)
        self.cash = np.zeros(n)
        self.t = np.zeros(n, np.int64)
        self.vol = env.sigma * math.sqrt(env.dt)
        self.penalty = 0.5 * env.risk_aversion * env.sigma**2 * env.dt
        self.a_dt = env.A * env.dt

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p, n, size, limit = self.p, self.n, self.p.order_size, self.p.max_inventory
        offsets = np.clip(actions, 0.0, p.max_offset)
        wealth = self.cash + self.q * self.mid
        u = self.rng.random((n, 2))
        filled = u < -np.expm1(-self.a_dt * np.exp(-p.k * offsets))
        buy = filled[:, 0] & (self.q + size <= limit)
        sell = filled[:, 1] & (self.q - size >= -limit)
        self.cash = self.cash - buy * size * (self.mid - offsets[:, 0])
        self.cash += sell * size * (self.mid + offsets[:, 1])
        self.q = self.q + size * (buy.astype(np.int64) - sell)
        self.mid = self.mid + self.vol * self.rng.standard_normal(n)
        reward = self.cash + self.q * self.mid - wealth - self.penalty * self.q * self.q
        self.t = self.t + 1
        done = self.t >= p.n_steps
        if done.any():
            self.mid[done], self.q[done], self.cash[done], self.t[done] = p.s0, 0, 0.0, 0
        obs = np.empty((n, 2), np.float32)
        obs[:, 0] = self.q / limit
        obs[:, 1] = (p.n_steps - self.t) / p.n_steps
        return obs, reward, done


class BareOptimalExecution:
    """OptimalExecution-v0's step for ``n`` copies in plain numpy (the reference)."""

    def __init__(self, n: int, seed: int = 0) -> None:
        env = OptimalExecutionEnv()
        self.p = env
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.x = np.full(n, env.X0)
        self.mid = np.full(n, env.s0)
        self.t = np.zeros(n, np.int64)
        self.vol = env.sigma * math.sqrt(env.tau)
        self.scale = env.sigma * math.sqrt(env.total_time)
        self.penalty = env.risk_aversion * env.sigma**2 * env.tau
        self.notional = env.X0 * env.s0

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p, n = self.p, self.n
        fraction = np.clip(actions[:, 0], 0.0, 1.0)
        sold = np.where(self.t >= p.n_steps - 1, self.x, fraction * self.x)
        price = np.where(sold > 0, self.mid - p.epsilon - p.eta / p.tau * sold, self.mid)
        self.x = self.x - sold
        self.x[self.x < 1e-9 * p.X0] = 0.0
        self.mid = self.mid + self.vol * self.rng.standard_normal(n) - p.gamma * sold
        reward = 1e4 * (sold * (price - p.s0) - self.penalty * self.x * self.x) / self.notional
        self.t = self.t + 1
        done = (self.x == 0.0) | (self.t >= p.n_steps)
        if done.any():
            self.x[done], self.mid[done], self.t[done] = p.X0, p.s0, 0
        obs = np.empty((n, 3), np.float32)
        obs[:, 0] = self.x / p.X0
        obs[:, 1] = (p.n_steps - self.t) / p.n_steps
        obs[:, 2] = (self.mid - p.s0) / self.scale
        return obs, reward, done


def _actions(env_id: str, n: int, pool: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dims, high = (2, 5.0) if env_id == "MarketMaking-v0" else (1, 1.0)
    return [rng.uniform(0.0, high, (n, dims)).astype(np.float32) for _ in range(pool)]


def bench_env(env_id: str, bare_cls: Any, n: int, chunk: int, rounds: int) -> dict[str, float]:
    """Steps per second of the bare reference, the native env, a single env and SyncVecEnv(16)."""
    actions = _actions(env_id, n, 64, 0)
    bare = bare_cls(n)
    native = sekai.make_vec(env_id, n)
    native.reset(seed=0)
    rates = interleaved(
        {"bare": (bare.step, actions, n), "native": (native.step, actions, n)}, chunk, rounds
    )
    native.close()

    single = sekai.make(env_id)
    single.reset(seed=0)

    def single_step(action: np.ndarray) -> None:
        if single.step(action).terminated:
            single.reset()

    sync = sekai.make_vec(env_id, 16, vectorization_mode="sync")
    sync.reset(seed=0)
    slow = interleaved(
        {
            "single": (single_step, [a[0] for a in _actions(env_id, 1, 64, 1)], 1),
            "sync16": (sync.step, _actions(env_id, 16, 64, 2), 16),
        },
        chunk,
        rounds,
    )
    sync.close()
    return {**rates, **slow}


def main() -> None:
    """Print the steps/s of each backend and the native/bare ratio for both envs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=positive_int, default=1024)
    parser.add_argument("--chunk", type=positive_int, default=20, help="steps per timed chunk")
    parser.add_argument(
        "--rounds", type=positive_int, default=60, help="timed chunks per contender"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 chunks of 5 steps")
    args, _ = parser.parse_known_args()  # the nox session passes its posargs to every script
    if args.quick:
        args.chunk, args.rounds = 5, 3
    print(machine(), flush=True)
    cases = (
        ("MarketMaking-v0", BareMarketMaking),
        ("OptimalExecution-v0", BareOptimalExecution),
    )
    worst = math.inf
    for env_id, bare in cases:
        rates = bench_env(env_id, bare, args.num_envs, args.chunk, args.rounds)
        ratio = rates["native"] / rates["bare"]
        worst = min(worst, ratio)
        print(
            f"{env_id:20s} bare numpy {rates['bare']:>12,.0f}/s  native {rates['native']:>12,.0f}/s"
            f"  ({ratio:6.1%} of bare, bar 40%)  single {rates['single']:>9,.0f}/s"
            f"  sync(16) {rates['sync16']:>9,.0f}/s   [{args.num_envs} sub-envs]"
        )
    print(f"worst native/bare ratio: {worst:.1%} ({'PASS' if worst >= 0.4 else 'FAIL'})")


if __name__ == "__main__":
    main()
