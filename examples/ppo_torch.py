"""PPO on an accelerated env in sekai's torch mode, in one loop (CleanRL's style).

Run: ``python examples/ppo_torch.py --env-id MarketMaking-v0`` (needs PyTorch, its CPU build
``pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu`` or on a GPU your
CUDA build, then ``pip install ./packages/sekai-torch``), or ``--help`` for the
hyperparameters; ``--device`` defaults to ``cuda`` when there is one.

``sekai.make_vec(id, n, vectorization_mode="torch", vector_kwargs={"device": ...})`` steps the
env's array kernel on tensors where the network lives, so a rollout never leaves the device.
Same flags, presets, observation/reward scaling and outputs as ``ppo_jax.py``: the learning
curve as CSV (``--curve``) and the deterministic policy scored by
``sekai.finance.baselines.evaluate`` next to the env's baselines.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ppo_common sits next to this file
from ppo_common import (
    TORCH_CPU,
    Curve,
    Moments,
    Result,
    flat_size,
    flatten_numpy,
    merge_moments,
    normalize,
    parse_args,
    require,
    run,
)

AGENT = "PPO (torch)"


def train(args: Any) -> tuple[Result, Callable[[Any, Any], Any]]:
    """Train as ``args`` say; returns the run's result (not yet evaluated) and the policy."""
    import torch
    from torch import nn
    from torch.distributions import Categorical, Normal

    import sekai

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(args.seed)
    n, steps = args.num_envs, args.num_steps
    # Actions are sampled and clipped to the bounds here: the per-step check is not needed.
    envs: Any = sekai.make_vec(
        args.env_id, n, vectorization_mode="torch",
        vector_kwargs={"device": device, "check_actions": False},
    )  # fmt: skip
    space: Any = envs.action_space
    discrete = hasattr(space, "n")
    act_dim = int(space.n) if discrete else int(np.prod(space.shape))
    obs_dim = flat_size(envs.observation_space)
    batch = n * steps
    minibatch = batch // args.num_minibatches
    num_updates = args.num_updates
    gamma, lam = args.gamma, args.gae_lambda

    def layer(n_in: int, n_out: int, std: float = math.sqrt(2)) -> nn.Linear:
        linear = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(linear.weight, std)
        nn.init.constant_(linear.bias, 0.0)
        return linear

    def mlp(n_out: int, std: float) -> nn.Sequential:
        h = args.hidden
        return nn.Sequential(
            layer(obs_dim, h), nn.Tanh(), layer(h, h), nn.Tanh(), layer(h, n_out, std)
        )

    if not discrete:
        low = torch.tensor(np.asarray(space.low, np.float32).reshape(-1), device=device)
        high = torch.tensor(np.asarray(space.high, np.float32).reshape(-1), device=device)

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.critic = mlp(1, 1.0)
            self.actor = mlp(act_dim, 0.01)
            if not discrete:
                # Start in the middle of the bounds, with a spread of --init-std of their width.
                self.log_std = nn.Parameter(torch.log((high - low) * args.init_std))

        def value(self, x: Any) -> Any:
            return self.critic(x)[:, 0]

        def dist(self, x: Any) -> Any:
            head = self.actor(x)
            if discrete:
                return Categorical(logits=head)
            mean = (low + high) / 2 + head * (high - low) / 2
            return Normal(mean, self.log_std.exp().expand_as(mean))

        def mode(self, x: Any) -> Any:
            d = self.dist(x)
            if discrete:
                return d.probs.argmax(-1)
            return torch.clamp(d.mean, low, high)

    agent = Agent().to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)

    def log_prob_entropy(d: Any, action: Any) -> tuple[Any, Any]:
        if discrete:
            return d.log_prob(action), d.entropy()
        return d.log_prob(action).sum(-1), d.entropy().sum(-1)

    def env_action(action: Any) -> Any:
        return action if discrete else torch.clamp(action, low, high)

    def flatten(obs: Any) -> Any:
        if isinstance(obs, Mapping):
            return torch.cat([flatten(obs[key]) for key in sorted(obs)], dim=1)
        return obs.reshape(obs.shape[0], -1).float()

    def zeros(*shape: int, dtype: Any = torch.float32) -> Any:
        return torch.zeros(shape, device=device, dtype=dtype)

    raw_buf, obs_buf = zeros(steps, n, obs_dim), zeros(steps, n, obs_dim)
    actions = zeros(steps, n) if discrete else zeros(steps, n, act_dim)
    if discrete:
        actions = actions.long()
    logprobs, rewards, dones, values, bootstrap, rets = (zeros(steps, n) for _ in range(6))
    obs_m = Moments(zeros(obs_dim), zeros(obs_dim) + 1, 1e-4)
    rew_m = Moments(zeros(), zeros() + 1, 1e-4)
    ret, ep_ret = zeros(n), zeros(n)

    curve = Curve()
    start = time.perf_counter()
    next_raw = flatten(envs.reset(seed=args.seed).observations)
    ended_sum, ended_count = zeros(), zeros()
    loss = torch.zeros(())
    done_updates = 0
    for update in range(1, num_updates + 1):
        optimizer.param_groups[0]["lr"] = args.lr * (1.0 - (update - 1.0) / num_updates)
        for step in range(steps):
            x = normalize(next_raw, obs_m)
            raw_buf[step], obs_buf[step] = next_raw, x
            with torch.no_grad():
                d = agent.dist(x)
                action = d.sample()
                logprobs[step] = log_prob_entropy(d, action)[0]
                values[step] = agent.value(x)
            actions[step] = action
            result: Any = envs.step(env_action(action))
            # A truncated episode is bootstrapped from the value of its real last observation,
            # which the driver keeps on the device (no host copy of the infos).
            final = flatten(envs.last_transition.final_observation)
            cut = result.truncated & ~result.terminated
            with torch.no_grad():
                bootstrap[step] = torch.where(cut, agent.value(normalize(final, obs_m)), 0.0)
            reward = result.rewards.float()
            done = (result.terminated | result.truncated).float()
            rewards[step], dones[step] = reward, done
            ret = ret * gamma + reward
            rets[step] = ret
            ret = ret * (1 - done)
            ep_ret = ep_ret + reward
            ended_sum += (ep_ret * done).sum()
            ended_count += done.sum()
            ep_ret = ep_ret * (1 - done)
            next_raw = flatten(result.observations)

        with torch.no_grad():  # generalised advantage estimation, on scaled rewards
            rew_m = merge_moments(rew_m, rets.reshape(-1))
            scaled = rewards / (rew_m.var + 1e-8) ** 0.5
            advantages = torch.zeros_like(rewards)
            advantage = zeros(n)
            next_value = agent.value(normalize(next_raw, obs_m))
            for t in reversed(range(steps)):
                not_done = 1 - dones[t]
                delta = scaled[t] + gamma * (next_value * not_done + bootstrap[t]) - values[t]
                advantage = delta + gamma * lam * not_done * advantage
                advantages[t] = advantage
                next_value = values[t]
            targets = advantages + values

        b_obs = obs_buf.reshape(batch, obs_dim)
        b_actions = actions.reshape(batch) if discrete else actions.reshape(batch, act_dim)
        b_logprobs, b_adv, b_targets = (a.reshape(-1) for a in (logprobs, advantages, targets))
        for _ in range(args.update_epochs):
            order = torch.randperm(batch, device=device)
            for begin in range(0, batch, minibatch):
                mb = order[begin : begin + minibatch]
                d = agent.dist(b_obs[mb])
                newlogprob, entropy = log_prob_entropy(d, b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(-adv * ratio, -adv * clipped).mean()
                v_loss = 0.5 * ((agent.value(b_obs[mb]) - b_targets[mb]) ** 2).mean()
                loss = pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        if args.obs_norm:  # else the moments stay (0, 1): observations pass unchanged
            obs_m = merge_moments(obs_m, raw_buf.reshape(batch, obs_dim))

        done_updates = update
        out_of_time = args.time_limit is not None and time.perf_counter() - start > args.time_limit
        if update % args.log_every == 0 or update == num_updates or out_of_time:
            count = float(ended_count)  # waits for the device
            mean_return = float(ended_sum) / count if count else math.nan
            ended_sum, ended_count = zeros(), zeros()
            seconds = time.perf_counter() - start
            curve.add(update * batch, seconds, mean_return)
            print(
                f"update {update}/{num_updates}  steps {update * batch:,}  "
                f"episode return {mean_return:10.4f}  loss {loss.item():8.4f}  ({seconds:.1f} s)",
                flush=True,
            )
        if out_of_time:
            break
    seconds = time.perf_counter() - start
    envs.close()
    agent.eval()

    def policy(observations: Any, vec_env: Any) -> Any:
        x = torch.as_tensor(flatten_numpy(observations), device=device)
        with torch.no_grad():
            return agent.mode(normalize(x, obs_m)).cpu().numpy()

    result = Result(
        args.env_id, AGENT, n, done_updates * batch, seconds, float(loss.detach()), curve
    )
    return result, policy


def check_device(args: Any) -> str | None:
    """Why ``--device`` cannot hold the network (None: it can, or torch is missing)."""
    if args.device is None:
        return None
    try:
        import torch
    except ModuleNotFoundError:
        return None  # require() then says how to install it
    try:
        device = torch.device(args.device)
    except RuntimeError as exc:
        return f"--device {args.device!r} is not a torch device: {exc}"
    if device.type == "cuda" and not torch.cuda.is_available():
        return (
            f"--device {args.device}: this torch ({torch.__version__}) sees no CUDA device; "
            "leave --device out to use the CPU."
        )
    try:
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError) as exc:  # a CPU-only build asserts on other devices
        return f"--device {args.device}: torch cannot use it ({exc})."
    return None


def main(argv: Sequence[str] | None = None) -> Result:
    args = parse_args(__doc__.splitlines()[0], argv, check_device)
    on_gpu = "(the CPU build; on a GPU, your CUDA build of the same torch release)"
    require("ppo_torch.py", f"{TORCH_CPU} && pip install ./packages/sekai-torch  {on_gpu}", "torch")
    require("ppo_torch.py", "pip install ./packages/sekai-torch", "sekai.torch")
    # The final evaluation runs sekai.finance.baselines.evaluate, for the classic envs too.
    require("ppo_torch.py", "pip install ./packages/sekai-finance", "sekai.finance.baselines")
    return run(args, train)


if __name__ == "__main__":
    main()
