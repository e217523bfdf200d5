"""The scripts in examples/ run as their docstrings say (the training ones only with --slow).

Each script runs in a fresh interpreter of this venv, from a scratch folder, as a user would run
it from a checkout. The training examples are also run with their optional library hidden, to
check that they stop with the command that installs it instead of a traceback.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.docs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# The CPU build of the pinned torch (the noxfile's TORCH), from the PyTorch CPU index.
TORCH_CPU = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
TRAINING_TIMEOUT = 1800.0

# Runs a script with some top-level packages made unimportable, as if they were not installed.
_HIDE = textwrap.dedent("""\
    import runpy, sys

    hidden = set(sys.argv[2].split(","))

    class Hide:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in hidden:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Hide())
    script = sys.argv[1]
    sys.argv = [script]
    runpy.run_path(script, run_name="__main__")
""")


def run(
    script: str,
    *args: str,
    tmp_path: Path,
    hide: tuple[str, ...] = (),
    timeout: float = 300.0,
) -> subprocess.CompletedProcess[str]:
    """Run ``examples/<script>`` with ``args`` (hiding packages ``hide``) and return the result."""
    path = str(EXAMPLES / script)
    argv = ["-c", _HIDE, path, ",".join(hide)] if hide else [path, *args]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_custom_native_env_example_registers_checks_and_times_its_env(tmp_path: Path) -> None:
    out = _ok(run("custom_native_env.py", tmp_path=tmp_path))
    assert "check: examples/Spread-v0 and SpreadVecEnv conform" in out
    assert "backends: SpreadVecEnv(num_envs=512), SyncVecEnv(num_envs=512)" in out
    native, sync = map(float, re.findall(r"native (-?\d+\.\d+), sync (-?\d+\.\d+)", out)[0])
    assert native > 1.0 and sync > 1.0 and abs(native - sync) < 0.5  # same dynamics, new draws
    assert int(re.findall(r"native is (\d+) times", out)[0]) > 1


def test_env_pack_example_plays_the_installed_example_pack(tmp_path: Path) -> None:
    out = _ok(run("env_pack.py", tmp_path=tmp_path))
    assert "example/Gridworld-v0: provided by sekai-example-pack 0.1.0 (plugin example)" in out
    assert "greedy policy, one episode:" in out
    assert "GridworldVecEnv: mean return" in out


@pytest.mark.parametrize(
    ("script", "library", "command"),
    [
        ("ppo_finance.py", "torch", TORCH_CPU),
        ("sb3_portfolio.py", "torch", f"{TORCH_CPU} && pip install stable-baselines3"),
        ("sb3_portfolio.py", "stable_baselines3", "pip install stable-baselines3"),
    ],
)
def test_training_example_without_its_library_exits_with_the_install_command(
    script: str, library: str, command: str, tmp_path: Path
) -> None:
    done = run(script, tmp_path=tmp_path, hide=(library,))
    assert done.returncode == 1, done.stderr
    assert command in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("--num-envs 0", "--num-envs must be at least 1, got 0."),
        ("--num-minibatches 0", "--num-minibatches must be at least 1, got 0."),
        ("--total-timesteps 0", "--total-timesteps must be at least 1, got 0."),
        (
            "--num-envs 2 --num-steps 3 --num-minibatches 8",
            "--num-minibatches (8) is larger than the batch, --num-envs x --num-steps (6).",
        ),
        (
            "--num-envs 2 --num-steps 3 --num-minibatches 4 --total-timesteps 6",
            "--num-envs x --num-steps (6) must split into --num-minibatches (4) equal",
        ),
        ("--env-id CartPole-v1", "--env-id CartPole-v1 has actions Discrete(2); "),
        ("--env-id Portfolio-v0", "--env-id Portfolio-v0 has observations Dict("),
        ("--env-id Nope-v0", "--env-id: Environment 'Nope-v0' not found in registry."),
    ],
)
def test_ppo_finance_flags_that_cannot_train_are_a_usage_error(
    flags: str, message: str, tmp_path: Path
) -> None:
    # Checked before torch is imported: the same error with or without it.
    done = run("ppo_finance.py", *flags.split(), tmp_path=tmp_path, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"ppo_finance.py: error: {message}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_ppo_example_on_another_box_env_is_scored_against_random_actions(tmp_path: Path) -> None:
    tiny = (
        "--env-id", "OptimalExecution-v0", "--total-timesteps", "256", "--num-envs", "8",
        "--num-steps", "16", "--num-minibatches", "2", "--update-epochs", "1",
        "--eval-episodes", "8",
    )  # fmt: skip
    out = _ok(run("ppo_finance.py", *tiny, tmp_path=tmp_path))
    scores = dict(re.findall(r"^  (\S.*?)\s+(-?\d+\.\d+) ± ", out, flags=re.MULTILINE))
    assert set(scores) == {"PPO", "random actions"}, out  # MarketMaking-v0's quotes: not here


@pytest.mark.slow
@pytest.mark.timeout(TRAINING_TIMEOUT + 60)
def test_ppo_example_learns_to_quote_far_better_than_random(tmp_path: Path) -> None:
    # The example's code, on a shorter run than its defaults (500,000 steps, 32 minibatches:
    # 5 min here, ending near Avellaneda-Stoikov): 1 min here, PPO ~43 against random's ~19.
    short = ("--total-timesteps", "192000", "--num-minibatches", "8", "--eval-episodes", "500")
    out = _ok(run("ppo_finance.py", *short, tmp_path=tmp_path, timeout=TRAINING_TIMEOUT))
    scores = dict(re.findall(r"^  (\S.*?)\s+(-?\d+\.\d+) ± ", out, flags=re.MULTILINE))
    assert float(scores["PPO"]) > float(scores["random quotes"]) + 15, out


@pytest.mark.slow
@pytest.mark.timeout(TRAINING_TIMEOUT + 60)
def test_sb3_example_trains_through_to_sb3_and_beats_random_allocations(tmp_path: Path) -> None:
    # The example's code on a shorter run than its defaults (200,000 steps): PPO ~+0.006
    # against random's ~-0.022 here.
    short = ("--total-timesteps", "60000", "--eval-episodes", "500")
    out = _ok(run("sb3_portfolio.py", *short, tmp_path=tmp_path, timeout=TRAINING_TIMEOUT))
    assert "training on SymmetricScores(PortfolioVecEnv(num_envs=16)) through SekaiToSB3" in out
    scores = dict(re.findall(r"^  (\S.*?)\s+([-+]\d+\.\d+) ± ", out, flags=re.MULTILINE))
    assert float(scores["PPO"]) > float(scores["random"]) + 0.01, out


def test_every_torch_install_instruction_names_the_pinned_build_of_the_noxfile() -> None:
    root = EXAMPLES.parent
    pinned = re.search(r'^TORCH = "(torch==[^"]+)"', (root / "noxfile.py").read_text(), re.M)
    assert pinned, "noxfile.py no longer defines TORCH"
    places = [
        root / "README.md",
        root / "docs" / "pages" / "installation.md",
        EXAMPLES / "README.md",
        *sorted(EXAMPLES.glob("*.py")),
    ]
    found = {}
    for path in places:
        # torch itself, not a name ending in it (./packages/sekai-torch), up to the end of a
        # code span or of a string literal
        pattern = r"pip install [^`\n\"]*?(?<![-\w/.])torch(?:==[\w.+]+)?"
        for command in re.findall(pattern, path.read_text()):
            found[f"{path.relative_to(root)}: {command}"] = command.split()[-1]
    assert found, "no torch install instruction found"
    assert {where for where, spec in found.items() if spec != pinned[1]} == set()


def test_every_pinned_torch_install_takes_the_cpu_build_from_the_pytorch_cpu_index() -> None:
    # PyPI's torch for Linux is the multi-GB CUDA build, pinned or not: a command that installs
    # the pinned torch names the PyTorch CPU index (and installs nothing else, which that index
    # does not hold), as the noxfile does.
    root = EXAMPLES.parent
    noxfile = (root / "noxfile.py").read_text()
    pinned = re.search(r'^TORCH = "(torch==[^"]+)"', noxfile, re.M)
    index = re.search(r'^TORCH_CPU_INDEX = "([^"]+)"', noxfile, re.M)
    assert pinned and index, "noxfile.py no longer defines TORCH and TORCH_CPU_INDEX"
    places = [
        root / "README.md",
        *sorted((root / "docs" / "pages").glob("*.md")),
        EXAMPLES / "README.md",
        *sorted(EXAMPLES.glob("*.py")),
    ]
    commands = {}
    for path in places:
        for line in path.read_text().splitlines():
            for command in re.findall(r"pip install [^`\n\"&;#(]*", line):
                if re.search(r"(?<![-\w/.])torch==", command):
                    commands.setdefault(command.strip(), []).append(path.name)
    assert commands, "no pinned torch install found"
    expected = f"pip install {pinned[1]} --index-url {index[1]}"
    assert {command: where for command, where in commands.items() if command != expected} == {}
