"""ProcVecEnv scale-out on a many-core host: one script, one table of bars.

Run: ``python benchmarks/bench_scaling.py`` on the 16-core GPU host (benchmarks/device/run1.sh
runs it there, with our wheels and gymnasium installed with ``--target .devsite``), or
``python benchmarks/bench_scaling.py --quick`` on a 2-core machine (``nox -s bench`` does).
Under 5 minutes on 16 cores, about one on 2. Every row that cannot run prints
``n/a: reason`` instead of stopping the script.

Rows (env steps per second, wall clock; each contender timed in short chunks in turn, best
chunk kept, so that load from other processes hits the contenders alike):

1. LimitOrderBook-v0 and Market-v0, 64 sub-envs: ``make_vec(..., "proc")`` with 1, 2, 4, 8 and
   16 workers against ``"sync"`` (bar: >= 12x at 16 workers; ``--quick``: 1 and 2 workers).
2. The same envs, 16 sub-envs on 16 workers, against gymnasium's ``AsyncVectorEnv`` of 16
   processes running ``sekai.compat.to_gymnasium`` of the same env (bar: >= 1.5x).
3. A test env whose step costs a random 0.1-1 ms of CPU (varies 10x), 32 sub-envs on 16
   workers (``--quick``: 4 on 2): ``send()`` / ``recv(batch_size=num_envs / 2)`` against
   ``step()`` (bar: >= 1.3x).
4. The parent's CPU time per sub-env step (``time.process_time()`` of this process over the
   timed chunks) at the most workers measured (bar: <= 3 us). Where ProcVecEnv has its
   workers' mailboxes (Linux x86-64), the same number of workers without them (pipes only)
   is timed in the same race and reported beside, with its parent CPU.
5. The 2-core bar: LimitOrderBook-v0 x 64 with 2 workers against sync (bar: >= 1.6x).
6. The host's own ceiling, no bar: as many processes as the most workers of row 1, each running
   the same pure-Python loop, against one process running it alone. No ProcVecEnv can scale
   past this; on a virtual machine whose vCPUs share physical cores it is well below the core
   count (a 2-vCPU machine measured 1.5-1.7x), and row 1's ratios read against it.

A bar gets its verdict only in the run it is for (``--quick``: the 2-core bar; otherwise the
16-core bars); the others read ``not judged here``.

``--envs CartPole-v1`` runs rows 1, 2 and 4 on another env instead (row 1 without its
bar): with a step that costs almost nothing, row 4 is the parent's own work, e.g. ``--quick
--workers 4,16 --envs CartPole-v1`` on 2 cores. Row 3 also reports the parent's CPU per
sub-env step of both calls; ``--recv-workers 16 --sleep-cost`` runs it on 16 workers whose env
sleeps its cost instead of spinning, so that a machine with fewer cores measures the scheduling
and the parent's work of 16 workers (not a 16-core figure: the sleeps overshoot).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from _args import positive_int, positive_ints

import sekai
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.spaces import Box, Discrete
from sekai.vector.proc import pool as proc_pool

BUDGET = 280.0  # seconds: rows not started by then print n/a
ENVS = ("LimitOrderBook-v0", "Market-v0")
CHUNK_SECONDS = 0.25  # each timed chunk lasts about this long
COST_LOW, COST_HIGH = 100e-6, 1e-3  # seconds of CPU per step of the random-cost env
SPIN = 200_000  # iterations of the ceiling row's loop: about 10 ms of one core


class RandomCostEnv(Env):  # type: ignore[type-arg]
    """Every step spins the CPU for a random 0.1-1 ms (log-uniform): step times vary 10x.
    With ``sleep``, it sleeps that long instead."""

    def __init__(self, sleep: bool = False) -> None:
        self.sleep = sleep
        self.observation_space = Box(-1.0, 1.0, shape=(8,))
        self.action_space = Discrete(2)
        self._obs = np.zeros(8, np.float32)
        self._t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> ResetResult[Any]:
        self._set_rng(seed)
        self._t = 0
        return ResetResult(self._obs, {})

    def step(self, action: Any) -> StepResult[Any]:
        cost = COST_LOW * (COST_HIGH / COST_LOW) ** self.rng.random()
        if self.sleep:
            time.sleep(cost)
        else:
            until = time.perf_counter() + cost
            while time.perf_counter() < until:
                pass
        self._t += 1
        return StepResult(self._obs, 1.0, False, self._t % 500 == 0, {"cost": cost})


class Timer:
    """A contender: a function doing one call of ``per_call`` env steps."""

    def __init__(self, call: Callable[[int], Any], per_call: int) -> None:
        self.call = call
        self.per_call = per_call
        self.rate = 0.0  # best env steps per second
        self.parent_us = float("inf")  # this process's CPU us per env step, best chunk
        self.calls = 1

    def calibrate(self) -> None:
        """Warm up, then size the chunks to about ``CHUNK_SECONDS``."""
        start = time.perf_counter()
        count = 0
        while time.perf_counter() - start < 0.2 or count < 3:
            self.call(count)
            count += 1
        per_call = (time.perf_counter() - start) / count
        self.calls = max(3, int(CHUNK_SECONDS / per_call))

    def chunk(self) -> None:
        cpu, start = time.process_time(), time.perf_counter()
        for index in range(self.calls):
            self.call(index)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        steps = self.calls * self.per_call
        if steps / wall > self.rate:
            self.rate = steps / wall
        self.parent_us = min(self.parent_us, cpu / steps * 1e6)


def race(timers: dict[str, Timer], rounds: int) -> None:
    """Time the contenders chunk by chunk, in turn."""
    for timer in timers.values():
        timer.calibrate()
    for _ in range(rounds):
        for timer in timers.values():
            timer.chunk()


def stepper(vec: Any, seed: int = 0) -> Timer:
    """A Timer calling ``vec.step`` with actions from a fixed pool."""
    vec.reset(seed=seed)
    space = vec.batch_action_space
    space.seed(seed)
    actions = [space.sample() for _ in range(16)]
    return Timer(lambda i: vec.step(actions[i % 16]), vec.num_envs)


def make(env_id: str, num_envs: int, workers: int | None) -> Any:
    if workers is None:
        return sekai.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync")
    kwargs = {"num_workers": workers}
    return sekai.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="proc", vector_kwargs=kwargs
    )


class Table:
    """The rows printed at the end: what, measured, bar, verdict.

    ``cores`` is the host this run's bars are for (2 with ``--quick``, else 16): a bar for
    the other host is shown with the verdict ``not judged here``.
    """

    def __init__(self, deadline: float, cores: int) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.deadline = deadline
        self.cores = cores

    def add(
        self, what: str, measured: str, bar: str = "", met: bool | None = None, cores: int = 16
    ) -> None:
        """A row; ``met`` is judged only when ``cores`` (the bar's host) is this run's."""
        if met is None:
            verdict = ""
        elif cores != self.cores:
            verdict = "not judged here"
        else:
            verdict = "met" if met else "NOT MET"
        self.rows.append((what, measured, bar, verdict))
        print(f"  {what}: {measured} {bar} {verdict}", flush=True)

    def na(self, whats: list[str], reason: str, bar: str = "") -> None:
        for what in whats:
            self.add(what, f"n/a: {reason}", bar)

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def print(self) -> None:
        widths = [max(len(row[i]) for row in [*self.rows, HEAD]) for i in range(4)]
        for row in [HEAD, tuple("-" * w for w in widths), *self.rows]:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


HEAD = ("check", "measured", "bar", "verdict")


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:120]


def scaling(table: Table, env_id: str, workers: list[int], rounds: int) -> None:
    """Row 1 (and 4, 5): 64 sub-envs, sync against proc with each number of workers."""
    whats = {w: f"{env_id} x64, proc {w} workers vs sync" for w in workers}
    if table.out_of_time():
        table.na(list(whats.values()), "time budget spent")
        return
    vecs: dict[str, Any] = {}
    try:
        vecs["sync"] = make(env_id, 64, None)
        for w in workers:
            vecs[str(w)] = make(env_id, 64, w)
        if proc_pool.USE_MAIL:  # the same run without the mailboxes: what they save
            proc_pool.USE_MAIL = False
            try:
                vecs["pipes"] = make(env_id, 64, max(workers))
            finally:
                proc_pool.USE_MAIL = True
        timers = {name: stepper(vec) for name, vec in vecs.items()}
        race(timers, rounds)
    except Exception as exc:  # a host that cannot run it: say why, go on
        table.na(list(whats.values()), _reason(exc))
        return
    finally:
        for vec in vecs.values():
            vec.close()
    sync = timers["sync"].rate
    table.add(f"{env_id} x64, sync", f"{sync:,.0f} steps/s")
    for w in workers:
        ratio = timers[str(w)].rate / sync
        bar, met, cores = ("", None, 16)
        if w == 16 and env_id in ENVS:
            bar, met = ">= 12x", ratio >= 12
        if w == 2 and env_id == "LimitOrderBook-v0":
            bar, met, cores = ">= 1.6x (2-core bar)", ratio >= 1.6, 2
        measured = f"{ratio:.2f}x ({timers[str(w)].rate:,.0f} steps/s)"
        table.add(whats[w], measured, bar, met, cores)
    top = max(workers)
    cost = timers[str(top)].parent_us
    table.add(
        f"{env_id} x64, proc {top} workers: parent CPU per sub-env step",
        f"{cost:.2f} us",
        "<= 3 us",
        cost <= 3.0,
    )
    if "pipes" in timers:
        pipes = timers["pipes"]
        table.add(
            f"{env_id} x64, proc {top} workers, pipes only (no mailboxes)",
            f"{pipes.rate / sync:.2f}x ({pipes.rate:,.0f} steps/s); parent CPU per sub-env "
            f"step {pipes.parent_us:.2f} us",
        )


def against_gymnasium(table: Table, env_id: str, rounds: int) -> None:
    """Row 2: 16 sub-envs on 16 workers against gymnasium's AsyncVectorEnv x 16."""
    what = f"{env_id} x16, proc 16 workers vs gymnasium AsyncVectorEnv x16"
    bar = ">= 1.5x"
    if table.out_of_time():
        table.na([what], "time budget spent", bar)
        return
    ours = theirs = None
    try:
        import gymnasium

        from sekai.compat import to_gymnasium

        def gym_env() -> Any:
            return to_gymnasium(sekai.make(env_id))

        theirs = gymnasium.vector.AsyncVectorEnv([gym_env] * 16)
        theirs.reset(seed=0)
        theirs.action_space.seed(0)
        gym_actions = [theirs.action_space.sample() for _ in range(16)]
        ours = make(env_id, 16, 16)
        timers = {
            "ours": stepper(ours),
            "gym": Timer(lambda i: theirs.step(gym_actions[i % 16]), 16),
        }
        race(timers, rounds)
    except Exception as exc:
        table.na([what], _reason(exc), bar)
        return
    finally:
        for vec in (ours, theirs):
            if vec is not None:
                vec.close()
    ratio = timers["ours"].rate / timers["gym"].rate
    measured = f"{ratio:.2f}x ({timers['ours'].rate:,.0f} vs {timers['gym'].rate:,.0f} steps/s)"
    table.add(what, measured, bar, ratio >= 1.5)


def async_batches(table: Table, workers: int, rounds: int, sleep: bool = False) -> None:
    """Row 3: send()/recv(num_envs / 2) against step() when step costs vary 10x."""
    num_envs = 2 * workers
    what = f"random-cost env x{num_envs}, {workers} workers: recv({num_envs // 2}) vs step()"
    what += " (sleeping, not a bar)" if sleep else ""
    bar = "" if sleep else ">= 1.3x"
    if table.out_of_time():
        table.na([what], "time budget spent", bar)
        return
    vec = None
    try:
        vec = sekai.ProcVecEnv(
            [functools.partial(RandomCostEnv, sleep)] * num_envs, num_workers=workers
        )
        half = num_envs // 2
        sync = stepper(vec)
        ones = np.ones(num_envs, dtype=np.int64)

        def start() -> None:
            vec.reset(seed=0)
            vec.send(ones)

        def batch(_: int) -> None:
            result = vec.recv(batch_size=half)
            vec.send(ones[:half], result.env_ids)

        timers = {"step": sync, "recv": Timer(batch, half)}
        for name in ("step", "recv"):
            if name == "recv":
                start()
            timers[name].calibrate()
        for _ in range(rounds):  # in turn; recv() needs the sends in flight, step() none
            vec.reset(seed=0)
            timers["step"].chunk()
            start()
            timers["recv"].chunk()
    except Exception as exc:
        table.na([what], _reason(exc), bar)
        return
    finally:
        if vec is not None:
            vec.close()
    ratio = timers["recv"].rate / timers["step"].rate
    measured = (
        f"{ratio:.2f}x ({timers['recv'].rate:,.0f} vs {timers['step'].rate:,.0f} steps/s; parent "
        f"CPU per sub-env step {timers['recv'].parent_us:.1f} vs {timers['step'].parent_us:.1f} us)"
    )
    table.add(what, measured, bar, None if sleep else ratio >= 1.3)


def spin(iterations: int) -> int:
    """Row 6's unit of work: pure Python, no memory traffic to speak of."""
    total = 0
    for i in range(iterations):
        total += i * i
    return total


def host_ceiling(table: Table, processes: int, rounds: int) -> None:
    """Row 6: ``processes`` processes spinning at once against one spinning alone."""
    what = f"this host: {processes} processes of pure-Python work vs 1 (the ceiling of row 1)"
    if table.out_of_time():
        table.na([what], "time budget spent")
        return
    try:
        with ProcessPoolExecutor(processes) as pool:
            list(pool.map(spin, [1] * processes))  # start every process before timing

            def together(_: int) -> None:
                list(pool.map(spin, [SPIN] * processes))

            timers = {"one": Timer(lambda _: spin(SPIN), 1), "all": Timer(together, processes)}
            race(timers, rounds)
    except Exception as exc:
        table.na([what], _reason(exc))
        return
    table.add(what, f"{timers['all'].rate / timers['one'].rate:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a 2-core machine: 1 and 2 workers, short runs"
    )
    parser.add_argument(
        "--budget-seconds", type=float, default=BUDGET, help="rows not started by then print n/a"
    )
    parser.add_argument(
        "--workers",
        type=positive_ints,
        help="worker counts of rows 1 and 4, e.g. 2,16 (default: 1,2,4,8,16; --quick: 1,2); "
        "more workers than cores still measure the parent's CPU per sub-env step",
    )
    parser.add_argument(
        "--envs",
        type=lambda text: text.split(","),
        default=list(ENVS),
        help="env IDs of rows 1, 2 and 4 (default: LimitOrderBook-v0,Market-v0); "
        "a cheap env such as CartPole-v1 shows the parent's own CPU per sub-env step",
    )
    parser.add_argument(
        "--recv-workers", type=positive_int, help="workers of row 3 (default: 16; --quick: 2)"
    )
    parser.add_argument(
        "--sleep-cost",
        action="store_true",
        help="row 3's env sleeps its step cost instead of spinning (no bar: see above)",
    )
    args, _ = parser.parse_known_args(argv)  # nox -s bench passes its posargs to every script
    started = time.monotonic()
    table = Table(started + args.budget_seconds, cores=2 if args.quick else 16)
    cores = os.cpu_count() or 1
    print(f"bench_scaling: {cores} cores, Python {sys.version.split()[0]}", flush=True)
    workers = args.workers or ([1, 2] if args.quick else [1, 2, 4, 8, 16])
    rounds = 3 if args.quick else 5
    for env_id in args.envs:
        scaling(table, env_id, workers, rounds)
    host_ceiling(table, max(workers), rounds)
    for env_id in args.envs:
        if args.quick:
            table.na(
                [f"{env_id} x16, proc 16 workers vs gymnasium AsyncVectorEnv x16"],
                "skipped with --quick (needs 16 cores)",
                ">= 1.5x",
            )
        else:
            against_gymnasium(table, env_id, rounds)
    recv_workers = args.recv_workers
    if recv_workers is None:
        recv_workers = 2 if args.quick else 16
    async_batches(table, recv_workers, rounds, args.sleep_cost)
    print()
    table.print()
    print(
        f"\n{time.monotonic() - started:.0f} s; bars are for an idle 16-core host"
        + (" (--quick: only the 2-core bar applies here)" if args.quick else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
