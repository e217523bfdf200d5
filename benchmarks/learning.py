"""Learning results (GPU host): PPO trained once per row, scored with the baselines.

Run on the GPU host (``docs/pages/results.md``; ``benchmarks/device/run2.sh`` runs it there)::

    python3 benchmarks/learning.py --out $OUT

Trains ``examples/ppo_jax.py`` / ``examples/ppo_torch.py`` on each row below, in priority order,
and prints one table: env, agent, sub-envs, env-steps, wall time of training (compilation
included), the PPO policy's score ± standard error and the baselines' scores from the same
``evaluate()`` call (same episodes, same seed). Into ``--out`` it writes ``results.md`` (that
table), one learning-curve PNG per env (score against wall-clock seconds, baselines as
horizontal lines) and each run's curve as CSV (default ``--out``: ``learning-results/``, which
git ignores). A row that fails, or that the time left cannot hold, reports ``n/a: reason``
instead of stopping the run. The table's "Commands" give each row's command line as it ran.

``--quick`` makes every row tiny (seconds on a CPU: the smoke test of this script);
``--only cartpole-jax,mm-torch`` runs some rows; ``--budget-seconds`` is the time the whole
run may take (rows that no longer fit are skipped; training stops early to keep to it).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import io
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Before JAX is imported: JAX would take 75% of the GPU's memory and leave torch little.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning_chart import curve_chart, write_png  # noqa: E402
from ppo_common import Result, parse_args, run  # noqa: E402


@dataclass(frozen=True)
class Row:
    """One line of the table: an agent on an env, its flags, its time and its bar."""

    name: str
    env_id: str
    agent: str  # "jax" or "torch"
    flags: tuple[str, ...]
    seconds: float  # training time limit on the GPU host, compilation included
    bar: str
    passed: Callable[[Result], bool]
    # The baseline whose expected score the bar is: scored on the same prices, it says how much
    # of a missed bar is the sample's luck (the optimum itself may score below its expectation).
    reference: str = ""


def _at_least(value: float) -> Callable[[Result], bool]:
    return lambda result: result.score[0] >= value


# Priority order: the integrator's run may be cut short. Each row's evaluation uses 10,000
# episodes (MarketMaking-v0's bar is set over 10,000; the same for all rows keeps them comparable).
ROWS = [
    Row("cartpole-jax", "CartPole-v1", "jax", (), 60.0,
        "mean return >= 475 within 60 s", _at_least(475.0)),
    Row("mm-jax", "MarketMaking-v0", "jax", (), 90.0,
        ">= 56.76 (Avellaneda-Stoikov)", _at_least(56.76), "AvellanedaStoikov"),
    Row("mm-torch", "MarketMaking-v0", "torch",
        ("--num-envs", "256", "--total-steps", "3000000"), 110.0,
        ">= 56.76 (Avellaneda-Stoikov)", _at_least(56.76), "AvellanedaStoikov"),
    Row("oe-jax", "OptimalExecution-v0", "jax", (), 45.0,
        ">= -340 bps", _at_least(-340.0)),
    Row("trading-jax", "Trading-v0", "jax", (), 45.0,
        ">= +0.0290 (buy and hold)", _at_least(0.0290), "BuyAndHold"),
    Row("portfolio-jax", "Portfolio-v0", "jax", (), 45.0,
        ">= +0.0500 (equal weight)", _at_least(0.0500), "EqualWeight"),
]  # fmt: skip
ROW_NAMES = [row.name for row in ROWS]
EVAL_EPISODES = 10_000
# Seconds kept free per row for building, evaluating (10,000 episodes of PPO and baselines on the
# native env) and writing: a row starts only when its training limit and this still fit.
OVERHEAD = 25.0
QUICK = ("--num-envs", "64", "--num-steps", "16", "--total-steps", "2048", "--log-every", "1")


def _share(row: Row, rows: Sequence[Row], left: float) -> float:
    """``row``'s training seconds when ``left`` (its own overhead taken) must also cover
    ``rows[1:]``: each row's time in proportion to its planned seconds, so that a short budget
    shortens every row instead of skipping the last ones."""
    others = len(rows) - 1
    planned = sum(r.seconds for r in rows)
    return max(left - OVERHEAD * others, 0.0) * row.seconds / planned


@dataclass
class Outcome:
    row: Row
    result: Result | None = None
    error: str = ""
    command: str = ""  # the command line the row ran ("" when skipped)


def _argv(row: Row, quick: bool, time_limit: float, out: Path) -> list[str]:
    """The example's flags for ``row``: every one that ran, so its command reproduces it."""
    episodes = 100 if quick else EVAL_EPISODES
    return [
        "--env-id", row.env_id, "--eval-episodes", str(episodes),
        "--time-limit", f"{time_limit:.0f}", "--curve", str(out / f"curve_{row.name}.csv"),
        *row.flags, *(QUICK if quick else ()),
    ]  # fmt: skip


def _run(row: Row, quick: bool, time_limit: float, out: Path) -> Result:
    """Train and evaluate ``row`` with ``_argv``'s flags (``run`` prints the report)."""
    module = importlib.import_module("ppo_jax" if row.agent == "jax" else "ppo_torch")
    argv = _argv(row, quick, time_limit, out)
    # A usage error exits; here it must fail the row only (its env missing on this host, say).
    usage = io.StringIO()
    try:
        with contextlib.redirect_stderr(usage):
            args = parse_args(row.name, argv)
    except SystemExit:
        last = (usage.getvalue().strip().splitlines() or ["the example refused its flags"])[-1]
        raise ValueError(last.partition(": error: ")[2] or last) from None  # without the prog
    result: Result = run(args, module.train)
    return result


def _command(row: Row, argv: Sequence[str]) -> str:
    script = "ppo_jax.py" if row.agent == "jax" else "ppo_torch.py"
    return " ".join(["python", f"examples/{script}", *argv])


def _score(pair: tuple[float, float]) -> str:
    mean, se = pair
    return f"{mean:+.4f} ± {se:.4f}" if abs(mean) < 1 else f"{mean:.2f} ± {se:.2f}"


def _difference(value: float) -> str:
    """A signed difference of scores, with ``_score``'s precision."""
    return f"{value:+.4f}" if abs(value) < 1 else f"{value:+.2f}"


def table(outcomes: Sequence[Outcome]) -> list[str]:
    """The results as markdown table lines."""
    lines = [
        "| env | agent | sub-envs | env-steps | wall time (s) | score ± s.e. | bar | baselines |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for o in outcomes:
        agent = f"PPO ({o.row.agent})"
        if o.result is None:
            lines.append(f"| {o.row.env_id} | {agent} | | | | n/a: {o.error} | {o.row.bar} | |")
            continue
        r = o.result
        verdict = "met" if o.row.passed(r) else "missed"
        if o.row.name == "cartpole-jax" and r.train_seconds > 60.0:
            verdict = "missed (time)"
        baselines = "; ".join(f"{name} {_score(value)}" for name, value in r.baselines.items())
        reference = r.baselines.get(o.row.reference)
        if reference is not None:
            baselines += f"; PPO minus {o.row.reference} {_difference(r.score[0] - reference[0])}"
        if "KellyBuyAndHold" in r.baselines:  # Portfolio's distance to its upper bound
            distance = r.score[0] - r.baselines["KellyBuyAndHold"][0]
            baselines += f"; PPO minus KellyBuyAndHold {_difference(distance)}"
        lines.append(
            f"| {r.env_id} | {agent} | {r.num_envs:,} | {r.env_steps:,} | "
            f"{r.train_seconds:.1f} | {_score(r.score)} | {o.row.bar}: **{verdict}** | "
            f"{baselines or '-'} |"
        )
    return lines


def machine() -> str:
    """The accelerator (if any) and Python, for the results' header."""
    parts = [platform.machine(), f"Python {platform.python_version()}"]
    try:
        import jax

        device = jax.devices()[0]
        parts.append(f"JAX {jax.__version__} on {getattr(device, 'device_kind', device)}")
    except Exception as exc:  # a host without JAX still runs the torch rows
        parts.append(f"JAX unavailable ({type(exc).__name__})")
    try:
        import torch

        gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
        parts.append(f"torch {torch.__version__} on {gpu}")
    except Exception as exc:
        parts.append(f"torch unavailable ({type(exc).__name__})")
    return ", ".join(parts)


def charts(outcomes: Sequence[Outcome], out: Path) -> list[Path]:
    """One learning-curve PNG per env that has at least one result."""
    paths = []
    for env_id in dict.fromkeys(o.row.env_id for o in outcomes):
        done = [o for o in outcomes if o.row.env_id == env_id and o.result is not None]
        if not done:
            continue
        curves = {
            f"PPO ({o.row.agent})": [(s, v) for _, s, v in o.result.curve.rows]  # type: ignore[union-attr]
            for o in done
        }
        baselines = {name: mean for name, (mean, _) in done[0].result.baselines.items()}  # type: ignore[union-attr]
        image = curve_chart(f"{env_id}: mean episode return while training", curves, baselines)
        paths.append(write_png(out / f"curve_{env_id}.png", image))
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # In a checkout: learning-results/ is git-ignored, so the results never get committed by
    # accident (docs/pages/results.md takes the table and the PNGs by hand).
    parser.add_argument("--out", type=Path, default=Path("learning-results"))
    parser.add_argument("--quick", action="store_true", help="tiny runs (a CPU smoke test)")
    parser.add_argument("--only", help=f"comma-separated rows of: {','.join(ROW_NAMES)}")
    parser.add_argument("--budget-seconds", type=float, default=420.0)
    args = parser.parse_args(argv)
    chosen = ROWS
    if args.only:
        names = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = sorted(set(names) - set(ROW_NAMES))
        if unknown:
            parser.error(f"--only: unknown rows {unknown}; the rows are {ROW_NAMES}.")
        chosen = [row for row in ROWS if row.name in names]
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    outcomes = []
    for index, row in enumerate(chosen):
        left = args.budget_seconds - (time.perf_counter() - start) - OVERHEAD
        limit = min(row.seconds, _share(row, chosen[index:], left)) if not args.quick else 30.0
        outcome = Outcome(row)
        if limit < min(10.0, row.seconds):
            outcome.error = f"skipped, {max(left, 0):.0f} s of the budget left"
        else:
            outcome.command = _command(row, _argv(row, args.quick, limit, args.out))
            print(f"== {row.name}: {outcome.command}", flush=True)
            try:
                outcome.result = _run(row, args.quick, limit, args.out)
            except Exception as exc:  # fail soft: the table says why, the next row runs
                traceback.print_exc()
                outcome.error = f"{type(exc).__name__}: {exc}".replace("|", "/")[:200]
        outcomes.append(outcome)
    lines = table(outcomes)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = [
        f"Machine: {machine()}. Date: {stamp}. Total {time.perf_counter() - start:.0f} s.",
        "",
    ]
    commands = ["", "Commands:", ""] + [
        f"- `{o.row.name}`: " + (f"`{o.command}`" if o.command else f"not run ({o.error})")
        for o in outcomes
    ]
    try:
        pictures = [path.name for path in charts(outcomes, args.out)]
    except Exception as exc:
        traceback.print_exc()
        pictures = [f"n/a: {type(exc).__name__}: {exc}"]
    # Image links as the Results page holds them, once the PNGs are copied next to it.
    images = ["", *(f"![{name}](images/results/{name})" for name in pictures if ".png" in name)]
    (args.out / "results.md").write_text("\n".join(header + lines + commands + images) + "\n")
    print("\n".join(["", *header, *lines, "", f"pictures: {', '.join(pictures)}"]), flush=True)
    print(f"total {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
