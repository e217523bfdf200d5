"""What ``ppo_jax.py`` and ``ppo_torch.py`` share: flags, per-env presets, the learning-curve CSV
and the final evaluation against the baselines (one ``evaluate()`` call per policy); and, for
every training example, ``require`` with the command that installs PyTorch (``TORCH_CPU``).

Not a script: the examples import it from their own folder.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "PRESETS",
    "TORCH_CPU",
    "Curve",
    "Moments",
    "Preset",
    "Result",
    "baselines_for",
    "evaluate_policy",
    "flat_size",
    "flatten_numpy",
    "merge_moments",
    "normalize",
    "parse_args",
    "require",
    "run",
]


# PyTorch as the project tests it: the CPU build of the pinned release, from the PyTorch CPU
# index. PyPI's torch for Linux, pinned or not, is a multi-GB CUDA build; the index holds
# nothing else, so other packages go in a second command.
TORCH_CPU = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


def require(script: str, command: str, *modules: str) -> None:
    """Exit with ``command`` when one of ``modules`` is not installed."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            sys.exit(
                f"examples/{script} needs {exc.name}, which is not installed.\n"
                f"Install it with: {command}"
            )


# Per-env hyperparameters, tuned on CPU with small runs (docs/pages/results.md). Flags win.
# The finance rewards are small numbers (Trading/Portfolio: log-returns of about 1e-4 a step),
# so rewards are scaled by a running standard deviation of the discounted return, and
# observations by running moments, in every preset.
class Preset(NamedTuple):
    """An env's default hyperparameters (each one a flag of the examples)."""

    num_envs: int
    total_steps: int
    num_steps: int
    lr: float
    num_minibatches: int
    update_epochs: int
    gamma: float
    gae_lambda: float
    ent_coef: float
    init_std: float
    eval_episodes: int
    obs_norm: bool = True


# Trading: every episode starts flat, and buying one step sooner gains only a step's drift
# against a certain cost, so a greedy policy learns to wait; a long horizon (gamma 0.99) and an
# entropy bonus, which keeps both positions visited for the critic, make it buy at once.
# Portfolio: the returns window carries no information (the prices are a random walk), and
# standardised it turns the noise in the network's weights into a policy that trades on it, each
# rebalance paying costs: its observations are left raw (returns of about 1e-2 barely move the
# policy). A short horizon (gamma 0.9, lambda 0.8) keeps the advantages' noise down, and big
# batches with a wide first spread (0.4 of the bounds' width) make the small gain of leaving cash
# visible: an action moved by a wider spread gains more, while the returns' noise stays the same.
PRESETS: dict[str, Preset] = {
    # env                         envs env-steps rollout lr mb epochs gamma lambda ent std eval
    "CartPole-v1":         Preset(256, 1_000_000, 64, 2.5e-3, 8, 4, 0.99, 0.95, 0.01, 1/6, 100),
    "MarketMaking-v0":     Preset(1024, 20_000_000, 100, 5e-4, 32, 10, 0.99, 0.95, 0, 1/6, 10**4),
    "OptimalExecution-v0": Preset(1024, 10_000_000, 25, 5e-4, 16, 10, 1.0, 0.95, 0, 1/6, 10**4),
    "Trading-v0":          Preset(1024, 10_000_000, 64, 3e-4, 4, 10, 0.99, 0.95, 0.03, 1/6, 10**4),
    "Portfolio-v0":        Preset(4096, 60_000_000, 64, 3e-4, 4, 4, 0.9, 0.8, 0, 0.4, 10**4,
                                  obs_norm=False),
}  # fmt: skip
_GENERIC = PRESETS["MarketMaking-v0"]

# The baselines each finance env is scored against (names of sekai.finance.baselines).
_BASELINES: dict[str, tuple[str, ...]] = {
    "MarketMaking-v0": ("AvellanedaStoikov", "OptimalQuotes"),
    "OptimalExecution-v0": ("TWAP", "AlmgrenChriss"),
    "Trading-v0": ("BuyAndHold",),
    "Portfolio-v0": ("EqualWeight", "KellyBuyAndHold"),
}


def parse_args(
    description: str,
    argv: Sequence[str] | None = None,
    check: Callable[[argparse.Namespace], str | None] | None = None,
) -> argparse.Namespace:
    """The flags of both examples; unset hyperparameters come from the env's preset.

    Bad values stop here with a usage error, before the accelerator library is imported:
    ``check(args)`` adds a script's own checks, returning the error message or None.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--env-id", default="CartPole-v1", help="a registered ID with an array kernel"
    )
    parser.add_argument("--num-envs", type=int, help="sub-envs stepped together")
    parser.add_argument("--total-steps", type=int, help="env-steps of training, all sub-envs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-steps", type=int, help="steps per rollout and sub-env")
    parser.add_argument("--lr", type=float, help="Adam's learning rate (annealed to 0)")
    parser.add_argument("--num-minibatches", type=int)
    parser.add_argument("--update-epochs", type=int)
    parser.add_argument("--gamma", type=float)
    parser.add_argument("--gae-lambda", type=float)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--hidden", type=int, default=64, help="units of both hidden layers")
    parser.add_argument(
        "--init-std", type=float, help="Box actions: first spread, a fraction of the bounds' width"
    )
    parser.add_argument("--eval-episodes", type=int, help="episodes of the final evaluation")
    parser.add_argument(
        "--obs-norm",
        action=argparse.BooleanOptionalAction,
        help="standardise observations by running moments",
    )
    parser.add_argument("--eval-seed", type=int, default=10_000)
    parser.add_argument(
        "--action-report",
        action="store_true",
        help="Box actions: also print the trained policy's mean action and how much it changes "
        "from one step to the next (a policy that trades on noise changes it every step)",
    )
    parser.add_argument("--log-every", type=int, default=5, help="updates between curve points")
    parser.add_argument(
        "--time-limit", type=float, help="stop training after the update that passes it (s)"
    )
    parser.add_argument("--curve", type=Path, help="learning-curve CSV (default: none)")
    parser.add_argument("--device", help="torch device (default: cuda when there is one)")
    args = parser.parse_args(argv)
    preset = PRESETS.get(args.env_id, _GENERIC)
    for name, value in preset._asdict().items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    message = _check_args(args)
    if message is None and check is not None:
        message = check(args)
    if message is not None:
        parser.error(message)
    args.num_updates = max(args.total_steps // (args.num_envs * args.num_steps), 1)
    return args


_POSITIVE = (
    "num_envs", "total_steps", "num_steps", "num_minibatches", "update_epochs", "hidden",
    "eval_episodes", "log_every",
)  # fmt: skip


def _check_args(args: argparse.Namespace) -> str | None:
    """The first problem with the flags (None: none), in the words of a usage error."""
    return check_sizes(args, _POSITIVE, ("lr", "init_std", "time_limit")) or _check_env(args.env_id)


def check_sizes(
    args: argparse.Namespace, counts: Sequence[str], rates: Sequence[str]
) -> str | None:
    """The first usage error among PPO's size flags (None: none): ``counts`` at least 1,
    ``rates`` positive (None allowed), and minibatches that split the rollout batch evenly.
    Shared by the examples' argument checks."""
    for name in counts:
        value = getattr(args, name)
        if value < 1:
            return f"--{name.replace('_', '-')} must be at least 1, got {value}."
    for name in rates:
        value = getattr(args, name)
        if value is not None and not value > 0:
            return f"--{name.replace('_', '-')} must be positive, got {value}."
    batch = args.num_envs * args.num_steps
    if args.num_minibatches > batch:
        return (
            f"--num-minibatches ({args.num_minibatches}) is larger than the batch, "
            f"--num-envs x --num-steps ({batch})."
        )
    if batch % args.num_minibatches:
        return (
            f"--num-envs x --num-steps ({batch}) must split into --num-minibatches "
            f"({args.num_minibatches}) equal minibatches."
        )
    return None


def _check_env(env_id: str) -> str | None:
    """Why ``env_id`` cannot train here (not registered, or no array kernel), or None."""
    import sekai
    from sekai.error import EnvNotFound

    try:
        spec = sekai.spec(env_id)
    except EnvNotFound as exc:
        return f"--env-id: {exc}"
    if spec.kernel_entry_point is None:
        with_kernel = ", ".join(s.id for s in sekai.all_specs() if s.kernel_entry_point)
        return (
            f"--env-id {env_id} has no array kernel, which the jax and torch modes run; "
            f"envs with one: {with_kernel or 'none installed'}."
        )
    return None


class Moments(NamedTuple):
    """Running mean and (population) variance of observations or returns, as arrays of either
    framework: the functions below use only operators that JAX and torch arrays share."""

    mean: Any
    var: Any
    count: Any


def merge_moments(m: Moments, x: Any) -> Moments:
    """``m`` updated with the rows of ``x`` (Chan et al.'s parallel formula)."""
    count = x.shape[0]
    mean = x.mean(0)
    delta = mean - m.mean
    total = m.count + count
    m2 = m.var * m.count + ((x - mean) ** 2).mean(0) * count + delta**2 * m.count * count / total
    return Moments(m.mean + delta * count / total, m2 / total, total)


def normalize(x: Any, m: Moments) -> Any:
    """``x`` standardised by ``m``, clipped to ±10 (an outlier must not swamp the network)."""
    return ((x - m.mean) / (m.var + 1e-8) ** 0.5).clip(-10.0, 10.0)


@dataclass
class Curve:
    """Learning-curve points: env-steps, wall seconds (compile included), mean episode return
    of the episodes that ended since the previous point (NaN when none did)."""

    rows: list[tuple[int, float, float]] = field(default_factory=list)

    def add(self, steps: int, seconds: float, mean_return: float) -> None:
        self.rows.append((int(steps), float(seconds), float(mean_return)))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["env_steps", "wall_seconds", "mean_episode_return"])
            writer.writerows(self.rows)


@dataclass
class Result:
    """One training run and its evaluation."""

    env_id: str
    agent: str
    num_envs: int
    env_steps: int
    train_seconds: float
    final_loss: float
    curve: Curve
    score: tuple[float, float] = (math.nan, math.nan)
    baselines: dict[str, tuple[float, float]] = field(default_factory=dict)

    def report(self) -> str:
        lines = [
            f"{self.agent} on {self.env_id}: {self.env_steps:,} env-steps on {self.num_envs} "
            f"sub-envs in {self.train_seconds:.1f} s (compile included), final loss "
            f"{self.final_loss:.4g}",
            "evaluation (mean episode return ± standard error):",
        ]
        for name, (mean, se) in {"PPO": self.score, **self.baselines}.items():
            lines.append(f"  {name:<20} {mean:10.4f} ± {se:.4f}")
        return "\n".join(lines)


def flat_size(space: Any) -> int:
    """Length of a flattened observation of ``space`` (a Box, or a Dict of Boxes)."""
    if hasattr(space, "spaces") and isinstance(space.spaces, Mapping):
        return sum(flat_size(part) for part in space.spaces.values())
    return int(np.prod(space.shape))


def flatten_numpy(observations: Any) -> np.ndarray:
    """A batch of observations as one float32 ``(n, features)`` array (a Dict's parts in sorted
    key order, as the JAX and torch examples flatten them)."""
    if isinstance(observations, Mapping):
        parts = [flatten_numpy(observations[key]) for key in sorted(observations)]
        return np.concatenate(parts, axis=1)
    array = np.asarray(observations, dtype=np.float32)
    return array.reshape(len(array), -1)


def baselines_for(env_id: str) -> dict[str, Any]:
    """The baseline policies ``env_id`` is scored against (none for the classic envs)."""
    names = _BASELINES.get(env_id, ())
    if not names:
        return {}
    from sekai.finance import baselines

    return {name: getattr(baselines, name)() for name in names}


def evaluate_policy(
    policy: Callable[[Any, Any], Any], env_id: str, episodes: int, seed: int
) -> tuple[tuple[float, float], dict[str, tuple[float, float]]]:
    """Score ``policy`` and the env's baselines with the same ``evaluate()`` arguments.

    ``sekai.finance.baselines.evaluate`` runs any env ID in ``make_vec``'s default mode, so the
    classic envs are scored by the same function, without baselines. ``CartPole-v1``'s default
    is a SyncVecEnv of Python envs (100 times slower over 10,000 episodes): its native twin
    ``classic/CartPole-v1``, the same dynamics, is scored instead.
    """
    import sekai
    from sekai.finance.baselines import evaluate
    from sekai.registry.api import native_twins

    if sekai.spec(env_id).vector_entry_point is None:
        env_id = next(iter(native_twins(env_id)), env_id)
    score = evaluate(policy, env_id, episodes, seed)
    others = {
        name: evaluate(baseline, env_id, episodes, seed)
        for name, baseline in baselines_for(env_id).items()
    }
    return score, others


def run(
    args: argparse.Namespace, train: Callable[[argparse.Namespace], tuple[Result, Any]]
) -> Result:
    """Both examples' ``main``: train, write the curve (``--curve``), evaluate, print the report.

    ``train(args)`` returns the run's ``Result`` (not yet evaluated) and the policy.
    """
    result, policy = train(args)
    if args.curve is not None:
        result.curve.write(args.curve)
    result.score, result.baselines = evaluate_policy(
        policy, args.env_id, args.eval_episodes, args.eval_seed
    )
    print(result.report())
    if args.action_report:
        print(action_report(policy, args.env_id, args.eval_seed))
    return result


def action_report(
    policy: Callable[[Any, Any], Any], env_id: str, seed: int, num_envs: int = 512
) -> str:
    """How the deterministic policy acts on ``num_envs`` sub-envs of the native vector env until
    each has finished an episode: its mean action, and the mean absolute change of each action
    component from one step to the next within an episode."""
    import sekai

    vec = sekai.make_vec(env_id, num_envs)
    try:
        if not hasattr(vec.action_space, "low"):
            return "action report: only for Box actions"
        observations = vec.reset(seed=seed).observations
        finished = np.zeros(num_envs, dtype=bool)
        previous: np.ndarray | None = None
        actions, changes = [], []
        while not finished.all():
            action = np.asarray(policy(observations, vec), dtype=np.float64)
            live = ~finished
            actions.append(action.reshape(num_envs, -1)[live])
            if previous is not None:  # within an episode: every sub-env is in its first one
                changes.append(np.abs(action - previous).reshape(num_envs, -1)[live])
            step = vec.step(action)
            observations, previous = step.observations, action
            finished |= np.asarray(step.terminated) | np.asarray(step.truncated)
    finally:
        vec.close()
    mean = np.concatenate(actions).mean(0)
    change = np.concatenate(changes).mean(0) if changes else np.zeros_like(mean)
    return (
        f"action report ({num_envs} episodes): mean action "
        f"{np.array2string(mean, precision=3)}, mean |change| per step "
        f"{np.array2string(change, precision=4)}"
    )
