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
    # The command is the one that ran: evaluation episodes, time limit and --quick's flags.
    command = next(line for line in table.splitlines() if line.startswith("- `mm-torch`"))
    for flags in ("--eval-episodes 100", "--time-limit 30", "--total-steps 2048"):
        assert flags in command, command
    assert out.count("evaluation (mean episode return") == 1, out  # the report, printed once
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


def test_learning_benchmark_row_the_example_refuses_says_why_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    learning = _learning(monkeypatch)
    missing = learning.Row("missing", "Nope-v0", "jax", (), 60.0, "-", lambda result: True)
    monkeypatch.setattr(learning, "ROWS", [missing])
    monkeypatch.setattr(learning, "machine", lambda: "a test host")  # spares importing jax, torch
    assert learning.main(["--out", str(tmp_path)]) == 0  # a usage error, not SystemExit
    table = (tmp_path / "results.md").read_text()
    assert "n/a: ValueError: --env-id: Environment 'Nope-v0' not found" in table


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
        (
            "ppo_torch.py",
            "torch",
            "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
            " && pip install ./packages/sekai-torch",
        ),
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


def _parse_args() -> Any:
    """``examples/ppo_common.py``'s ``parse_args``."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from ppo_common import parse_args
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return parse_args


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-envs", "0"], "--num-envs must be at least 1, got 0."),
        (["--num-steps", "0"], "--num-steps must be at least 1, got 0."),
        (["--num-minibatches", "0"], "--num-minibatches must be at least 1, got 0."),
        (["--total-steps", "-5"], "--total-steps must be at least 1, got -5."),
        (["--log-every", "0"], "--log-every must be at least 1, got 0."),
        (
            ["--num-envs", "2", "--num-steps", "2", "--num-minibatches", "8"],
            "--num-minibatches (8) is larger than the batch, --num-envs x --num-steps (4).",
        ),
        (
            ["--num-envs", "3", "--num-steps", "2", "--num-minibatches", "4"],
            "--num-envs x --num-steps (6) must split into --num-minibatches (4) equal",
        ),
        (["--env-id", "Cartpole-v1"], "Did you mean: 'CartPole-v1'?"),
        (["--env-id", "Pendulum-v1"], "--env-id Pendulum-v1 has no array kernel"),
    ],
)
def test_ppo_flags_that_cannot_train_are_a_usage_error(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _parse_args()("t", flags)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_ppo_torch_with_a_device_torch_cannot_use_is_a_usage_error(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this torch has a CUDA device")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ppo_torch.py"), *SMOKE, "--device", "cuda"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: --device cuda: this torch" in done.stderr and "sees no CUDA" in done.stderr
    assert "Traceback" not in done.stderr


# Runs an example with some modules (and their submodules) made unimportable, keeping its flags.
_HIDE_MODULES = """
import runpy, sys
hidden = tuple(sys.argv[2].split(","))
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name in hidden or name.startswith(tuple(f"{h}." for h in hidden)):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
script = sys.argv[1]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize("script", ["ppo_jax.py", "ppo_torch.py"])
def test_ppo_example_without_sekai_finance_stops_before_training(
    script: str, tmp_path: Path
) -> None:
    # CartPole-v1 trains without sekai-finance, but the final evaluation needs it: the example
    # says so before training, not in a traceback after it.
    done = subprocess.run(
        [
            sys.executable, "-c", _HIDE_MODULES, str(ROOT / "examples" / script),
            "sekai.finance,sekai.envs.finance", "--env-id", "CartPole-v1", *SMOKE,
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "needs sekai.finance" in done.stderr, done.stderr
    assert "pip install ./packages/sekai-finance" in done.stderr
    assert "Traceback" not in done.stderr and "update " not in done.stdout


@pytest.mark.parametrize("script", ["ppo_jax.py", "ppo_torch.py"])
def test_ppo_examples_make_exactly_the_updates_total_steps_asks_for(
    script: str, tmp_path: Path
) -> None:
    # Three updates of 512 env-steps with a curve point every two: the JAX example runs the
    # third alone (a shorter compiled chunk), so both train the same budget on the same flags.
    curve = tmp_path / "curve.csv"
    out = run(
        str(ROOT / "examples" / script), "--env-id", "CartPole-v1", *SMOKE,
        "--total-steps", "1536", "--log-every", "2", "--curve", str(curve), "--device", "cpu",
        cwd=tmp_path,
    )  # fmt: skip
    assert "update 3/3 " in out and "1,536 env-steps" in out, out
    with curve.open() as handle:
        assert [int(row["env_steps"]) for row in csv.DictReader(handle)] == [1024, 1536]


@pytest.mark.parametrize("budget", [300.0, 420.0, 545.0, 1000.0])
def test_learning_budget_is_shared_so_that_every_row_runs(
    budget: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short budget shortens every row in proportion instead of skipping the last ones.
    learning = _learning(monkeypatch)
    rows, used, limits = learning.ROWS, 0.0, []
    for index, row in enumerate(rows):
        left = budget - used - learning.OVERHEAD
        limits.append(min(row.seconds, learning._share(row, rows[index:], left)))
        used += limits[-1] + learning.OVERHEAD
    assert used <= budget + 1e-9
    assert min(limits) >= 10.0  # none skipped
    if budget >= sum(row.seconds for row in rows) + learning.OVERHEAD * len(rows):
        assert limits == [row.seconds for row in rows]
    else:
        ratios = {round(limit / row.seconds, 9) for limit, row in zip(limits, rows)}
        assert len(ratios) == 1  # the same fraction of every row's planned time
