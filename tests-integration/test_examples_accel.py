"""Smoke runs of the PPO examples on the accelerated envs and of benchmarks/learning.py (CPU).

A few PPO updates on 64 sub-envs, in a fresh interpreter as a user would run them: each example
on a Discrete env (CartPole-v1) and on a Box-action env with Dict observations (Portfolio-v0),
checking that it trains, reports a finite loss, writes its curve and evaluates. The full runs are
the GPU host's (``benchmarks/learning.py``). Run by ``nox -s examples_accel``, the session that
installs JAX (CPU), flax, optax and torch.
"""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.accel

ROOT = Path(__file__).resolve().parents[1]
# Two updates of 64 sub-envs x 8 steps, two epochs of two minibatches, 8 evaluation episodes.
SMOKE = (
    "--num-envs", "64", "--num-steps", "8", "--total-steps", "1024", "--log-every", "1",
    "--num-minibatches", "2", "--update-epochs", "2", "--eval-episodes", "8",
)  # fmt: skip


def run(*argv: str, cwd: Path) -> str:
    """Run a script of the checkout with this venv's Python; its stdout (it must succeed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(
        [sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=280,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.parametrize("script", ["ppo_jax.py", "ppo_torch.py"])
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Portfolio-v0"])
def test_ppo_example_trains_a_few_updates_with_a_finite_loss_and_evaluates(
    script: str, env_id: str, tmp_path: Path
) -> None:
    curve = tmp_path / "curve.csv"
    out = run(
        str(ROOT / "examples" / script), "--env-id", env_id, *SMOKE, "--curve", str(curve),
        "--device", "cpu", "--action-report", cwd=tmp_path,
    )  # fmt: skip
    assert "on 64 sub-envs" in out
    loss = float(re.findall(r"final loss (\S+)", out)[0])
    assert math.isfinite(loss), out
    scores = dict(re.findall(r"^  (\S+)\s+(\S+) ± ", out, flags=re.MULTILINE))
    assert math.isfinite(float(scores["PPO"])), out
    if env_id == "Portfolio-v0":  # scored next to its baselines, by the same evaluate() call
        assert {"EqualWeight", "KellyBuyAndHold"} <= set(scores), out
        # six scores (five assets and cash), each near the middle of [0, 1] after two updates
        report = re.findall(r"mean action \[(.*)\], mean \|change\| per step \[(.*)\]", out)
        means, changes = ([float(x) for x in part.split()] for part in report[0])
        assert len(means) == len(changes) == 6, out
        assert all(0.4 < m < 0.6 for m in means) and all(0 <= c < 0.1 for c in changes), out
    else:
        assert "action report: only for Box actions" in out
    with curve.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["env_steps"]) for row in rows] == [512, 1024]
    assert all(float(row["wall_seconds"]) > 0 for row in rows)


def test_learning_benchmark_quick_row_writes_its_table_and_curve_picture(tmp_path: Path) -> None:
    out = run(
        str(ROOT / "benchmarks" / "learning.py"), "--quick", "--only", "mm-torch",
        "--out", str(tmp_path / "results"), cwd=tmp_path,
    )  # fmt: skip
    table = (tmp_path / "results" / "results.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| MarketMaking-v0"))
    assert "PPO (torch)" in row and "n/a" not in row and "AvellanedaStoikov" in row
    assert "python examples/ppo_torch.py --env-id MarketMaking-v0" in table
    picture = tmp_path / "results" / "curve_MarketMaking-v0.png"
    assert picture.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "pictures: curve_MarketMaking-v0.png" in out


def test_learning_benchmark_reports_a_row_that_fails_instead_of_stopping(tmp_path: Path) -> None:
    # No time left for any row: every chosen row says why, and the run still writes its table.
    run(
        str(ROOT / "benchmarks" / "learning.py"), "--only", "cartpole-jax,mm-jax",
        "--budget-seconds", "1", "--out", str(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    table = (tmp_path / "results.md").read_text()
    assert table.count("n/a: skipped") == 2, table


def _learning(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``benchmarks/learning.py`` as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("learning", ROOT / "benchmarks" / "learning.py")
    assert spec is not None and spec.loader is not None
    learning = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "learning", learning)  # dataclasses look their module up
    spec.loader.exec_module(learning)
    return learning


def test_learning_table_gives_the_distance_to_the_bars_policy_on_the_same_prices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Buy and hold is Trading-v0's optimum, and the bar its expected score: on a sample of
    # prices where buy and hold itself scores below the bar, a policy equal to it misses the
    # bar, and the table says by how little it trails buy and hold.
    learning = _learning(monkeypatch)
    from ppo_common import Curve, Result

    rows = {row.name: row for row in learning.ROWS}
    trading = Result(
        "Trading-v0", "PPO (JAX)", 1024, 10**7, 40.0, 0.02, Curve(),
        (0.0257, 0.0020), {"BuyAndHold": (0.0257, 0.0020)},
    )  # fmt: skip
    portfolio = Result(
        "Portfolio-v0", "PPO (JAX)", 4096, 6 * 10**7, 40.0, 0.1, Curve(),
        (0.0519, 0.0022), {"EqualWeight": (0.0509, 0.0022), "KellyBuyAndHold": (0.0551, 0.0021)},
    )  # fmt: skip
    lines = learning.table(
        [
            learning.Outcome(rows["trading-jax"], trading),
            learning.Outcome(rows["portfolio-jax"], portfolio),
            learning.Outcome(rows["oe-jax"], None, "skipped"),
        ]
    )
    trading_line = next(line for line in lines if line.startswith("| Trading-v0"))
    assert "**missed**" in trading_line and "PPO minus BuyAndHold +0.0000" in trading_line
    portfolio_line = next(line for line in lines if line.startswith("| Portfolio-v0"))
    assert "**met**" in portfolio_line
    assert "PPO minus EqualWeight +0.0010" in portfolio_line
    assert "PPO minus KellyBuyAndHold -0.0032" in portfolio_line


def test_learning_benchmark_row_that_raises_says_why_and_the_next_row_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    learning = _learning(monkeypatch)
    ran = []

    def fake_run(row: object, quick: bool, limit: float, out: Path) -> object:
        ran.append(row.name)  # type: ignore[attr-defined]
        if row.name == "cartpole-jax":  # type: ignore[attr-defined]
            raise RuntimeError("no accelerator | here")
        raise ValueError("second row failed too")

    monkeypatch.setattr(learning, "_run", fake_run)
    monkeypatch.setattr(learning, "machine", lambda: "a test host")  # spares importing jax, torch
    assert learning.main(["--only", "mm-jax,cartpole-jax", "--out", str(tmp_path)]) == 0
    assert ran == ["cartpole-jax", "mm-jax"]  # priority order, whatever --only's order
    table = (tmp_path / "results.md").read_text()
    assert "n/a: RuntimeError: no accelerator / here" in table  # a | would break the table
    assert "n/a: ValueError: second row failed too" in table


_HIDE = """
import runpy, sys
hidden = set(sys.argv[2].split(","))
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in hidden:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
script = sys.argv[1]
sys.argv = [script]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize(
    ("script", "library", "command"),
    [
        ("ppo_jax.py", "optax", 'pip install "jax[cpu]" flax optax ./packages/sekai-jax'),
        ("ppo_torch.py", "torch", "pip install torch==2.13.0 ./packages/sekai-torch"),
    ],
)
def test_ppo_example_without_its_library_exits_with_the_install_command(
    script: str, library: str, command: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _HIDE, str(ROOT / "examples" / script), library],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"needs {library}" in done.stderr and command in done.stderr
    assert "Traceback" not in done.stderr


def test_presets_set_standardisation_and_spread_unless_a_flag_says_otherwise() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from ppo_common import parse_args
    finally:
        sys.path.remove(str(ROOT / "examples"))
    # Portfolio-v0's returns window is noise: its preset leaves observations raw.
    assert parse_args("t", ["--env-id", "Portfolio-v0"]).obs_norm is False
    assert parse_args("t", ["--env-id", "Portfolio-v0", "--obs-norm"]).obs_norm is True
    assert parse_args("t", ["--env-id", "CartPole-v1"]).obs_norm is True
    assert parse_args("t", ["--env-id", "CartPole-v1", "--no-obs-norm"]).obs_norm is False
    # ... and explores widely: the gain of leaving cash is small against the returns' noise.
    assert parse_args("t", ["--env-id", "Portfolio-v0"]).init_std == 0.4
    assert parse_args("t", ["--env-id", "Portfolio-v0", "--init-std", "0.1"]).init_std == 0.1
    assert parse_args("t", ["--env-id", "MarketMaking-v0"]).init_std == 1 / 6
