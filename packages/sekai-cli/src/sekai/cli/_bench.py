"""``sekai bench ID``: random-action throughput of an env on one or several vector backends."""

from __future__ import annotations

import argparse
import copy
import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from sekai.cli._args import UsageError, non_negative_int, positive_int
from sekai.cli._env_module import NATIVE_MODES, import_env_modules
from sekai.cli._output import BOLD, Output, Progress, format_table

__all__ = ["BenchResult", "add_parser", "bench", "compare", "run"]

# Modes whose backends run sub-envs in worker processes and take num_workers.
WORKER_MODES = ("proc", "ray")
POOL_SIZE = 100
WARMUP_CALLS = 100

_EXAMPLES = """\
examples:
  sekai bench CartPole-v1 --steps 2000
  sekai bench Portfolio-v0 --num-envs 16 --mode sync
  sekai bench Portfolio-v0 --num-envs 1024 --mode proc --workers 4
  sekai bench Portfolio-v0 --num-envs 1024 --compare native sync proc --workers 2
  sekai bench Portfolio-v0 --num-envs 16 --json

--steps counts calls: each vector call steps every sub-env, so the env steps timed are
steps x num-envs. Actions are sampled before timing (a pool of up to 100 batches from the
action space seeded with --seed), so the figure measures the env, not the sampler. With
--num-envs 1 and --mode auto or sync a single env is timed (reset when an episode ends).
"""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bench`` subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="measure random-action env steps per second",
        description=(
            "Measure how many random-action env steps per second ENV_ID runs, as a single\n"
            "env or as a vector env on one or several backends."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("env_id", metavar="ENV_ID", help="a registered ID, e.g. Portfolio-v0")
    parser.add_argument(
        "--steps",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="calls to time (default: 10000), after min(N // 10, 100) warm-up calls",
    )
    parser.add_argument(
        "--num-envs",
        type=positive_int,
        default=1,
        metavar="N",
        help="sub-envs per vector env (default: 1)",
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--mode",
        default="auto",
        metavar="MODE",
        help="auto (default), native, sync, async, proc, or a plugin's mode such as ray",
    )
    modes.add_argument(
        "--compare",
        nargs="+",
        metavar="MODE",
        help=(
            "time several modes, taking turns in chunks of 1%% of the calls, and print a "
            "table with each one's ratio to the first"
        ),
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="worker processes for --mode proc (default: one per sub-env)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        metavar="S",
        help="seed of the reset and of the action sampling (default: 0)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)


@dataclass(frozen=True)
class BenchResult:
    """One timed run."""

    env_id: str
    label: str
    backend: str
    mode: str
    num_envs: int
    num_workers: int | None
    calls: int
    seconds: float

    @property
    def env_steps(self) -> int:
        """Calls times sub-envs."""
        return self.calls * self.num_envs

    @property
    def steps_per_second(self) -> float:
        """Env steps per second of the timed loop."""
        return self.env_steps / max(self.seconds, 1e-9)

    def line(self) -> str:
        """``{id} [{label}]: {total:,} env steps in {secs:.2f}s = {rate:,.0f} steps/s``."""
        return (
            f"{self.env_id} [{self.label}]: {self.env_steps:,} env steps in "
            f"{self.seconds:.2f}s = {self.steps_per_second:,.0f} steps/s"
        )

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "id": self.env_id,
            "label": self.label,
            "mode": self.mode,
            "num_envs": self.num_envs,
            "num_workers": self.num_workers,
            "calls": self.calls,
            "env_steps": self.env_steps,
            "seconds": self.seconds,
            "steps_per_second": self.steps_per_second,
        }


def _pool(space: Any, seed: int, size: int) -> list[Any]:
    """``size`` actions from a seeded copy of ``space`` (the env's own space is left alone)."""
    sampler = copy.deepcopy(space)
    sampler.seed(seed)
    return [sampler.sample() for _ in range(size)]


@dataclass(frozen=True)
class _Run:
    """One mode built and reset, ready to time."""

    mode: str
    label: str
    backend: str
    workers: int | None
    calls: Callable[[int, int], None]  # (first, count): step with pool[first:first + count]
    synchronize: Callable[[], None]  # wait for the device to finish the calls made so far


def _no_wait() -> None:
    """The ``synchronize`` of a host env: its calls return when their work is done."""


def _time_runs(runs: list[_Run], steps: int, chunk: int, progress: Progress) -> list[float]:
    """Seconds that ``steps`` calls of each run took, in chunks of ``chunk`` calls.

    The runs take turns chunk by chunk, in an order reversed every round (A B, B A, ...), so
    that a load spike on a shared machine hits every mode alike; each run's seconds are the
    sum of its chunks. Each warms up just before its first chunk, untimed. A chunk ends with
    ``synchronize()``, inside the timed region: a device that is still busy when the calls
    return is timed until it is done. Only chunks are timed, so drawing the bar never counts.
    """
    warmup = min(steps // 10, WARMUP_CALLS)
    clock = time.perf_counter
    elapsed = [0.0] * len(runs)
    order = list(range(len(runs)))
    done = finished = 0
    while done < steps:
        count = min(chunk, steps - done)
        for i in order:
            run = runs[i]
            if not done:
                run.calls(0, warmup)
                run.synchronize()  # the warm-up's queued work must not spill into the clock
            start = clock()
            run.calls(warmup + done, count)
            run.synchronize()
            elapsed[i] += clock() - start
            finished += count
            progress.update(finished)
        done += count
        order.reverse()
    return elapsed


def _single(env_id: str, mode: str, steps: int, seed: int, stack: ExitStack) -> _Run:
    from sekai.registry import make

    env = make(env_id)
    stack.callback(env.close)
    pool = _pool(env.action_space, seed, min(steps, POOL_SIZE))
    size = len(pool)
    env.reset(seed=seed)
    step, reset = env.step, env.reset

    def calls(first: int, count: int) -> None:
        for i in range(first, first + count):
            result = step(pool[i % size])
            if result.terminated or result.truncated:
                reset()

    return _Run(mode, "single env", "single env", None, calls, _no_wait)


def _vector(
    env_id: str,
    mode: str,
    num_envs: int,
    workers: int | None,
    steps: int,
    seed: int,
    stack: ExitStack,
) -> _Run:
    from sekai.registry import make_vec
    from sekai.vector.kernel_vec_env import KernelVecEnv

    vector_kwargs = {"num_workers": workers} if workers is not None else None
    vec = make_vec(
        env_id,
        num_envs,
        vectorization_mode=None if mode == "auto" else mode,
        vector_kwargs=vector_kwargs,
    )
    stack.callback(vec.close)
    backend = type(vec).__name__
    ran = getattr(vec, "num_workers", None)  # e.g. fewer than asked: one per sub-env at most
    pool = _pool(vec.batch_action_space, seed, min(steps, POOL_SIZE))
    size = len(pool)
    vec.reset(seed=seed)
    step = vec.step
    base = vec.unwrapped
    # A kernel env may run on a device that computes after step() returns (JAX, CUDA).
    synchronize = base.synchronize if isinstance(base, KernelVecEnv) else _no_wait

    def calls(first: int, count: int) -> None:
        for i in range(first, first + count):
            step(pool[i % size])

    return _Run(mode, f"{backend} x{num_envs}", backend, ran, calls, synchronize)


def compare(
    env_id: str,
    modes: list[str],
    *,
    num_envs: int,
    workers: int | None,
    steps: int,
    seed: int,
    out: Output,
    report: Callable[[list[BenchResult]], None] | None = None,
) -> list[BenchResult]:
    """Time ``steps`` random-action calls of ``env_id`` in each of ``modes``, interleaved.

    Every mode is built first; then the modes take turns in chunks of 1% of the calls (a
    single mode without a progress bar runs in one chunk). A single env is timed when
    ``num_envs == 1`` and the mode is ``auto`` or ``sync``; otherwise
    ``make_vec(env_id, num_envs, vectorization_mode=...)``. ``workers`` reaches only the
    backends of ``WORKER_MODES``. ``report`` (if given) is called with the results before the
    envs are closed, so that a ``close()`` that raises does not lose them.
    """
    with ExitStack() as stack:
        runs = []
        for mode in modes:
            if _times_one_env(num_envs, mode):
                runs.append(_single(env_id, mode, steps, seed, stack))
            else:
                asked = workers if mode in WORKER_MODES else None
                runs.append(_vector(env_id, mode, num_envs, asked, steps, seed, stack))
        label = f"{env_id} [{', '.join(modes)}]"
        with out.progress(steps * len(runs), label) as progress:
            chunked = progress.enabled or len(runs) > 1
            chunk = max(1, steps // 100) if chunked else steps
            seconds = _time_runs(runs, steps, chunk, progress)
        results = [
            BenchResult(env_id, r.label, r.backend, r.mode, num_envs, r.workers, steps, s)
            for r, s in zip(runs, seconds, strict=True)
        ]
        if report is not None:
            report(results)
    return results


def bench(
    env_id: str,
    mode: str,
    *,
    num_envs: int,
    workers: int | None,
    steps: int,
    seed: int,
    out: Output,
) -> BenchResult:
    """Time ``steps`` random-action calls of ``env_id`` in ``mode`` (``compare`` of one)."""
    results = compare(
        env_id, [mode], num_envs=num_envs, workers=workers, steps=steps, seed=seed, out=out
    )
    return results[0]


def _check_workers(modes: list[str], workers: int | None) -> None:
    if workers is None or any(mode in WORKER_MODES for mode in modes):
        return
    from sekai.plugins import report

    which = "proc" if "sekai-ray" in report().missing else "proc or ray"
    raise UsageError(f"--workers applies to --mode {which} only")


def _times_one_env(num_envs: int, mode: str) -> bool:
    """Whether ``mode`` times a single env (``make``), not ``make_vec``."""
    return num_envs == 1 and mode in ("auto", "sync")


def _builds_native(env_id: str, modes: list[str], num_envs: int) -> bool:
    """Whether a run of ``modes`` builds the spec's native vector env (``auto`` picks it as
    ``make_vec`` does)."""
    from sekai.registry import spec
    from sekai.registry.api import default_mode

    env_spec = spec(env_id)
    return any(
        not _times_one_env(num_envs, mode)
        and (default_mode(env_spec) if mode == "auto" else mode) in NATIVE_MODES
        for mode in modes
    )


def _check_modes(env_id: str, modes: list[str]) -> None:
    """Refuse a mode ``make_vec`` would refuse (unknown, not installed, no native or kernel
    version of the env) with its own message, before the first run: a typo in the last mode of
    ``--compare`` must not cost the runs before it."""
    from sekai.registry import spec
    from sekai.registry.api import mode_backend

    env_spec = spec(env_id)
    for mode in modes:
        if mode != "auto":  # make_vec's default mode, always there
            mode_backend(env_spec, mode)


def _ratio(value: float) -> str:
    """``1.00x``, ``12.34x``; below 0.1, three significant digits (``0.0139x``, not ``0.01x``)."""
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.3g}x"


def _compare_table(results: list[BenchResult], out: Output) -> list[str]:
    first = results[0].steps_per_second
    rows = [
        [r.mode, r.backend, f"{r.steps_per_second:,.0f}", _ratio(r.steps_per_second / first)]
        for r in results
    ]
    return format_table(
        ["MODE", "BACKEND", "STEPS/S", "RATIO"], rows, "llrr", header_style=BOLD, colour=out.colour
    )


def run(args: argparse.Namespace, out: Output) -> int:
    """Run the benchmark(s) and print the bench line(s), the comparison table or JSON.

    They are printed before the envs are closed: a ``close()`` that raises is reported after
    them (``error: ...``, exit status 2) instead of replacing them.
    """
    modes: list[str] = list(args.compare) if args.compare else [args.mode]
    _check_workers(modes, args.workers)
    import_env_modules(args.env_id, vector=_builds_native(args.env_id, modes, args.num_envs))
    _check_modes(args.env_id, modes)
    compare(
        args.env_id,
        modes,
        num_envs=args.num_envs,
        workers=args.workers,
        steps=args.steps,
        seed=args.seed,
        out=out,
        report=lambda results: _print_results(args, results, out),
    )
    return 0


def _print_results(args: argparse.Namespace, results: list[BenchResult], out: Output) -> None:
    if not args.json:
        out.lines([result.line() for result in results])
    if args.json:
        if args.compare:
            first = results[0].steps_per_second
            data: Any = [{**r.to_json(), "ratio": r.steps_per_second / first} for r in results]
        else:
            data = results[0].to_json()
        out.print(json.dumps(data, indent=2))
    elif args.compare:
        out.print()
        out.lines(_compare_table(results, out))
