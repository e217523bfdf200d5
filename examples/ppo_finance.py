"""PPO on a native finance vector environment, in one file (CleanRL's ppo_continuous_action style).

Run: ``python examples/ppo_finance.py`` (needs PyTorch's CPU build,
``pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu``), or
``python examples/ppo_finance.py --help`` for the hyperparameters.

The agent learns to make markets in ``MarketMaking-v0``: each step it quotes a bid and an ask
distance around the mid, earns the spread when filled, and pays a penalty on its inventory.
All ``--num-envs`` sessions are simulated at once by the native ``MarketMakingVecEnv``, so
collecting experience costs a few NumPy calls per step. At the end the learned policy is scored
with ``sekai.finance.baselines.evaluate`` against the bars of the finance docs page: random
quotes (about 20), the Avellaneda-Stoikov closed form (56.8) and the exact optimum (59.1). With
the defaults (500,000 steps, a few minutes on one CPU core) PPO ends close to Avellaneda-Stoikov;
beating it, and reaching the optimum, takes longer training and tuning. ``--env-id`` trains any
other env with Box actions and Box observations (OptimalExecution-v0, Pendulum-v1, ...), scored
against random actions only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import sekai
from sekai.error import EnvNotFound
from sekai.finance.baselines import AvellanedaStoikov, OptimalQuotes, RandomPolicy, evaluate
from sekai.spaces import Box

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ppo_common sits next to this file
from ppo_common import TORCH_CPU, check_sizes, require


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The flags; a bad value stops here with a usage error, before torch is imported."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--env-id",
        default="MarketMaking-v0",
        help="a registered ID with Box actions and Box observations (MarketMaking-v0, "
        "OptimalExecution-v0, Pendulum-v1, MountainCarContinuous-v0)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--total-timesteps", type=int, default=500_000)
    parser.add_argument("--num-envs", type=int, default=64, help="sub-envs of the native env")
    parser.add_argument("--num-steps", type=int, default=100, help="steps per rollout and env")
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--num-minibatches", type=int, default=32)
    parser.add_argument("--update-epochs", type=int, default=10)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float, default=0.0)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--eval-episodes", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    message = _check_args(args)
    if message is not None:
        parser.error(message)
    return args


_POSITIVE = (
    "total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs",
    "eval_episodes", "threads",
)  # fmt: skip


def _check_args(args: argparse.Namespace) -> str | None:
    """The first problem with the flags (None: none), in the words of a usage error."""
    return check_sizes(args, _POSITIVE, ("learning_rate",)) or _check_env(args.env_id)


def _check_env(env_id: str) -> str | None:
    """Why ``env_id`` cannot train here (not registered, or spaces that are not Boxes), or None.

    The agent is a Gaussian policy on a flat observation vector: it needs Box actions with
    finite bounds and a Box observation.
    """
    try:
        env = sekai.make(env_id)
    except EnvNotFound as exc:
        return f"--env-id: {exc}"
    try:
        spaces = {"actions": env.action_space, "observations": env.observation_space}
    finally:
        env.close()
    for what, space in spaces.items():
        if not isinstance(space, Box):
            return (
                f"--env-id {env_id} has {what} {space}; this example trains a Gaussian policy "
                f"on Box observations and Box actions (MarketMaking-v0, OptimalExecution-v0, "
                f"Pendulum-v1, MountainCarContinuous-v0)."
            )
    bounds = np.concatenate([spaces["actions"].low.ravel(), spaces["actions"].high.ravel()])
    if not np.all(np.isfinite(bounds)):
        return f"--env-id {env_id} has unbounded actions {spaces['actions']}; finite bounds needed."
    return None


def require_torch() -> Any:
    """Import torch, or exit with the command that installs it."""
    require("ppo_finance.py", TORCH_CPU, "torch")
    import torch

    return torch


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch = require_torch()
    from torch import nn
    from torch.distributions.normal import Normal

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # The environment: native, raw returns recorded innermost, rewards scaled for the critic.
    stats = sekai.VecRecordEpisodeStatistics(sekai.make_vec(args.env_id, args.num_envs))
    envs = sekai.VecNormalizeReward(stats, gamma=args.gamma)
    obs_dim = int(np.prod(envs.observation_space.shape))
    action_space = envs.action_space
    act_dim = int(np.prod(action_space.shape))
    low, high = action_space.low, action_space.high
    print(f"{args.env_id}: {envs.unwrapped}, observation {obs_dim}, action {action_space}")

    def layer(n_in: int, n_out: int, std: float = np.sqrt(2)) -> Any:
        linear = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(linear.weight, std)
        nn.init.constant_(linear.bias, 0.0)
        return linear

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.critic = nn.Sequential(
                layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, std=1.0)
            )
            self.actor_mean = nn.Sequential(
                layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, act_dim, 0.01)
            )
            # Start in the middle of the action range, with a spread of about a third of it.
            self.offset = nn.Parameter(torch.tensor((low + high) / 2), requires_grad=False)
            self.actor_logstd = nn.Parameter(torch.log(torch.tensor((high - low) / 6)))

        def value(self, x: Any) -> Any:
            return self.critic(x)

        def action_and_value(self, x: Any, action: Any = None) -> tuple[Any, ...]:
            mean = self.actor_mean(x) + self.offset
            dist = Normal(mean, self.actor_logstd.expand_as(mean).exp())
            if action is None:
                action = dist.sample()
            logprob = dist.log_prob(action).sum(1)
            return action, logprob, dist.entropy().sum(1), self.critic(x)

        def act(self, x: Any) -> Any:
            return self.actor_mean(x) + self.offset  # the deterministic policy, for evaluation

    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    n, steps = args.num_envs, args.num_steps
    batch_size = n * steps
    minibatch_size = batch_size // args.num_minibatches
    obs = torch.zeros((steps, n, obs_dim))
    actions = torch.zeros((steps, n, act_dim))
    logprobs, rewards, dones, values = (torch.zeros((steps, n)) for _ in range(4))
    bootstrap = torch.zeros((steps, n))  # value of the true last state where an episode truncates

    def tensor(x: Any) -> Any:
        return torch.as_tensor(np.asarray(x, dtype=np.float32).reshape(len(x), -1))

    next_obs = tensor(envs.reset(seed=args.seed).observations)
    next_done = torch.zeros(n)
    num_updates = max(args.total_timesteps // batch_size, 1)
    start = time.perf_counter()
    for update in range(1, num_updates + 1):
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1.0) / num_updates)
        for step in range(steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            result = envs.step(np.clip(action.numpy(), low, high))
            rewards[step] = torch.as_tensor(result.rewards, dtype=torch.float32)
            # Same-step autoreset: next_obs already starts the next episode. A truncated
            # episode is bootstrapped from its real last observation, kept in the info.
            bootstrap[step] = 0.0
            for i in np.flatnonzero(result.truncated & ~result.terminated):
                final = tensor([result.infos[i]["final_observation"]])
                with torch.no_grad():
                    bootstrap[step, i] = agent.value(final).item()
            next_obs = tensor(result.observations)
            next_done = torch.as_tensor(result.dones, dtype=torch.float32)

        with torch.no_grad():  # generalised advantage estimation
            next_value = agent.value(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(n)
            for t in reversed(range(steps)):
                not_done = 1.0 - (next_done if t == steps - 1 else dones[t + 1])
                following = next_value if t == steps - 1 else values[t + 1]
                target = rewards[t] + args.gamma * (following * not_done + bootstrap[t])
                delta = target - values[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                advantages[t] = last
            returns = advantages + values

        b_obs, b_actions = obs.reshape(-1, obs_dim), actions.reshape(-1, act_dim)
        b_logprobs, b_advantages = logprobs.reshape(-1), advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        order = np.arange(batch_size)
        for _ in range(args.update_epochs):
            np.random.default_rng(update).shuffle(order)
            for begin in range(0, batch_size, minibatch_size):
                mb = order[begin : begin + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.action_and_value(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if update % 5 == 0 or update == num_updates:
            recent = list(stats.tracker.episodes)[-200:]
            mean_return = np.mean([s.episode_return for s in recent]) if recent else float("nan")
            sps = update * batch_size / (time.perf_counter() - start)
            print(
                f"update {update}/{num_updates}  steps {update * batch_size:,}  "
                f"episode return {mean_return:6.2f}  ({sps:,.0f} steps/s)"
            )
    envs.close()

    def ppo_policy(observations: Any, env: Any) -> Any:
        with torch.no_grad():
            action = agent.act(tensor(observations)).numpy()
        return np.clip(action, low, high)

    episodes = args.eval_episodes
    print(f"evaluation on {episodes} episodes (mean episode return ± standard error):")
    policies: list[tuple[str, Any]] = [("PPO", ppo_policy)]
    if args.env_id == "MarketMaking-v0":  # the closed-form baselines are MarketMaking-v0's
        policies += [
            ("random quotes", RandomPolicy(0)),
            ("Avellaneda-Stoikov", AvellanedaStoikov()),
            ("optimal quotes", OptimalQuotes()),
        ]
    else:
        policies.append(("random actions", RandomPolicy(0)))
    for name, policy in policies:
        mean, se = evaluate(policy, args.env_id, episodes=episodes, seed=10_000)
        print(f"  {name:<20} {mean:8.2f} ± {se:.2f}")


if __name__ == "__main__":
    main()
