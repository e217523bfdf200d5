"""Train Stable-Baselines3's PPO on a native sekai vector environment through ``to_sb3``.

Run: ``python examples/sb3_portfolio.py`` (needs PyTorch's CPU build,
``pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu``, then
``pip install stable-baselines3``), or ``--help`` for the options.

``sekai.compat.to_sb3(vec)`` turns any sekai ``VecEnv`` into an SB3 ``VecEnv``. Here it wraps
the native ``PortfolioVecEnv``, so SB3 collects experience from all sub-envs with a few NumPy
calls per step instead of looping over Python environments in a ``DummyVecEnv``. The portfolio
is the migration guide's: three assets and cash, 63-step episodes. A vector action wrapper
exposes the scores in ``[-1, 1]``, the range SB3's Gaussian policies are built for (it does for
the whole batch what ``sekai.RescaleAction`` does for one env). At the end the trained policy is
scored with ``sekai.finance.baselines.evaluate`` next to the baselines of the finance docs page:
equal weight including cash (+0.0085) and Kelly buy-and-hold (+0.0120, the bar). A short run
stays below them: treat the script as the wiring to start from, not as a tuned agent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

import sekai
from sekai.finance.baselines import EqualWeight, KellyBuyAndHold, RandomPolicy, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ppo_common sits next to this file
from ppo_common import TORCH_CPU, require

ENV_ID = "Portfolio-v0"
ENV_KWARGS: dict[str, Any] = {"n_assets": 3, "episode_length": 63}


class SymmetricScores(sekai.VecActionWrapper):
    """Take actions in ``[-1, 1]`` and send ``(a + 1) / 2`` to the env's ``[0, 1]`` scores."""

    def __init__(self, venv: sekai.VecEnv) -> None:
        super().__init__(venv)
        self.action_space = sekai.Box(-1.0, 1.0, shape=venv.action_space.shape)

    def action(self, actions: Any) -> Any:
        return (np.clip(np.asarray(actions, dtype=np.float32), -1.0, 1.0) + 1.0) / 2.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-timesteps", type=int, default=200_000)
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # torch first: stable-baselines3 on its own would pull PyPI's multi-GB CUDA build of it.
    require("sb3_portfolio.py", f"{TORCH_CPU} && pip install stable-baselines3", "torch")
    require("sb3_portfolio.py", "pip install stable-baselines3", "stable_baselines3")
    import torch
    from stable_baselines3 import PPO

    from sekai.compat import to_sb3

    torch.set_num_threads(args.threads)

    vec = SymmetricScores(sekai.make_vec(ENV_ID, args.num_envs, **ENV_KWARGS))
    venv = to_sb3(vec)
    print(f"training on {vec} through {type(venv).__name__}")
    model = PPO(
        "MultiInputPolicy",  # the observation is a Dict: returns and weights
        venv,
        n_steps=256,
        batch_size=256,
        learning_rate=3e-4,
        gamma=0.99,
        seed=args.seed,
        verbose=0,
    )
    model.learn(total_timesteps=args.total_timesteps)
    venv.close()

    def ppo(observations: Any, env: Any) -> Any:
        actions, _ = model.predict(observations, deterministic=True)
        return (np.clip(actions, -1.0, 1.0) + 1.0) / 2.0  # back to the env's scores

    print(f"evaluation on {args.eval_episodes} episodes (mean log growth ± standard error):")
    for name, policy in [
        ("PPO", ppo),
        ("random", RandomPolicy(0)),
        ("equal weight incl. cash", EqualWeight(include_cash=True)),
        ("Kelly buy-and-hold", KellyBuyAndHold()),
    ]:
        mean, se = evaluate(policy, ENV_ID, episodes=args.eval_episodes, seed=1000, **ENV_KWARGS)
        print(f"  {name:<24} {mean:+.4f} ± {se:.4f}")


if __name__ == "__main__":
    main()
