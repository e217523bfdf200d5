"""PPO on an accelerated env, every update (rollout, GAE, minibatch epochs) inside ``jax.jit``.

Run: ``python examples/ppo_jax.py --env-id MarketMaking-v0`` (needs ``pip install "jax[cpu]" flax
optax ./packages/sekai-jax``; on a GPU, JAX's CUDA build), or ``--help`` for the hyperparameters.

The PureJaxRL recipe on sekai's functional API: ``sekai.jax.make_functional(id, num_envs)``
gives pure ``reset``/``step`` functions (autoreset included), so the env is stepped inside the
same compiled program as the network, with ``lax.scan`` over the rollout, the epochs and the
minibatches. Any env with an array kernel trains: a Discrete action space gets a categorical
policy, a Box one a Gaussian whose samples are clipped to the bounds, and Dict observations are
flattened. Observations and rewards are scaled by running moments (the finance rewards are small
numbers). At the end the deterministic policy (the mode) is scored by
``sekai.finance.baselines.evaluate`` next to the env's baselines; ``--curve`` writes the learning
curve (env-steps, wall seconds with compilation, mean episode return) as CSV.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ppo_common sits next to this file
from ppo_common import (
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

AGENT = "PPO (JAX)"


def train(args: Any) -> tuple[Result, Callable[[Any, Any], Any]]:
    """Train as ``args`` say; returns the run's result (not yet evaluated) and the policy."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax
    from flax.linen.initializers import constant, orthogonal

    from sekai.jax import make_functional

    env = make_functional(args.env_id, args.num_envs)
    space: Any = env.action_space
    discrete = hasattr(space, "n")
    act_dim = int(space.n) if discrete else int(np.prod(space.shape))
    obs_dim = flat_size(env.observation_space)
    if not discrete:
        low = jnp.asarray(np.asarray(space.low, np.float32).reshape(-1))
        high = jnp.asarray(np.asarray(space.high, np.float32).reshape(-1))
    n, steps = args.num_envs, args.num_steps
    batch = n * steps
    num_updates = args.num_updates
    # Updates run in compiled chunks of --log-every (a curve point after each); a last, shorter
    # chunk makes up the rest (the same program, the updates past it skipped), so the run makes
    # exactly as many updates as ppo_torch.py's.
    chunk = min(args.log_every, num_updates)
    chunks = [chunk] * (num_updates // chunk) + [num_updates % chunk] * bool(num_updates % chunk)
    gamma, lam = args.gamma, args.gae_lambda

    class ActorCritic(nn.Module):
        @nn.compact
        def __call__(self, x: Any) -> tuple[Any, Any]:
            def torso(h: Any) -> Any:
                for _ in range(2):
                    dense = nn.Dense(args.hidden, kernel_init=orthogonal(math.sqrt(2)))
                    h = nn.tanh(dense(h))
                return h

            value = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(torso(x))
            head = nn.Dense(act_dim, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(
                torso(x)
            )
            if discrete:
                return head, value[..., 0]
            # Start in the middle of the bounds, with a spread of --init-std of their width.
            log_std = self.param("log_std", lambda _: jnp.log((high - low) * args.init_std))
            mean = (low + high) / 2 + head * (high - low) / 2
            return (mean, log_std), value[..., 0]

    net = ActorCritic()

    def flatten(obs: Any) -> Any:
        if isinstance(obs, Mapping):
            return jnp.concatenate([flatten(obs[key]) for key in sorted(obs)], axis=1)
        return obs.reshape(obs.shape[0], -1).astype(jnp.float32)

    def sample(key: Any, out: Any) -> Any:
        if discrete:
            return jax.random.categorical(key, out)
        mean, log_std = out
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)

    def log_prob_entropy(out: Any, action: Any) -> tuple[Any, Any]:
        if discrete:
            logp = jax.nn.log_softmax(out)
            chosen = jnp.take_along_axis(logp, action[:, None], axis=1)[:, 0]
            return chosen, -(jnp.exp(logp) * logp).sum(-1)
        mean, log_std = out
        z = (action - mean) / jnp.exp(log_std)
        logp = (-0.5 * z**2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        entropy = (log_std + 0.5 * (1 + math.log(2 * math.pi))).sum(-1)
        return logp, jnp.broadcast_to(entropy, logp.shape)

    def mode(out: Any) -> Any:
        return jnp.argmax(out, -1).astype(jnp.int32) if discrete else jnp.clip(out[0], low, high)

    def env_action(action: Any) -> Any:
        return action.astype(jnp.int32) if discrete else jnp.clip(action, low, high)

    total_grad_steps = num_updates * args.update_epochs * args.num_minibatches
    schedule = optax.linear_schedule(args.lr, 0.0, total_grad_steps)
    tx = optax.chain(optax.clip_by_global_norm(args.max_grad_norm), optax.adam(schedule, eps=1e-5))

    class Runner(NamedTuple):
        params: Any
        opt_state: Any
        env_state: Any
        obs: Any  # raw, flattened
        obs_m: Moments
        rew_m: Moments
        ret: Any  # discounted return so far, for the reward scale
        ep_ret: Any  # undiscounted episode return so far, for the curve
        key: Any

    def init(key: Any) -> Runner:
        k_net, k_env, key = jax.random.split(key, 3)
        params = net.init(k_net, jnp.zeros((1, obs_dim)))
        env_state, obs, _ = env.reset(k_env)
        zeros = jnp.zeros(n)
        return Runner(
            params, tx.init(params), env_state, flatten(obs),
            Moments(jnp.zeros(obs_dim), jnp.ones(obs_dim), jnp.asarray(1e-4)),
            Moments(jnp.zeros(()), jnp.ones(()), jnp.asarray(1e-4)),
            zeros, zeros, key,
        )  # fmt: skip

    def env_step(r: Runner, _: Any) -> tuple[Runner, tuple[Any, ...]]:
        key, k_act, k_env = jax.random.split(r.key, 3)
        x = normalize(r.obs, r.obs_m)
        out, value = net.apply(r.params, x)
        action = sample(k_act, out)
        logp, _ = log_prob_entropy(out, action)
        t = env.step(k_env, r.env_state, env_action(action))
        # A truncated episode is bootstrapped from the value of its real last observation.
        final_value: Any
        _, final_value = net.apply(r.params, normalize(flatten(t.final_observation), r.obs_m))
        bootstrap = jnp.where(t.truncated & ~t.terminated, final_value, 0.0)
        reward = t.reward.astype(jnp.float32)
        done = t.done.astype(jnp.float32)
        ret = r.ret * gamma + reward
        ep_ret = r.ep_ret + reward
        finished = (jnp.where(t.done, ep_ret, 0.0).sum(), done.sum())
        r = r._replace(
            env_state=t.state, obs=flatten(t.observation), ret=ret * (1 - done),
            ep_ret=ep_ret * (1 - done), key=key,
        )  # fmt: skip
        return r, (r.obs, x, action, logp, value, reward, done, bootstrap, ret, finished)

    def loss_fn(params: Any, mb: tuple[Any, ...]) -> Any:
        x, action, old_logp, advantage, target = mb
        out, value = net.apply(params, x)
        logp, entropy = log_prob_entropy(out, action)
        ratio = jnp.exp(logp - old_logp)
        adv = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        clipped = jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
        pg_loss = jnp.maximum(-adv * ratio, -adv * clipped).mean()
        v_loss = 0.5 * ((value - target) ** 2).mean()
        return pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy.mean()

    def minibatch_step(carry: Any, mb: tuple[Any, ...]) -> tuple[Any, Any]:
        params, opt_state = carry
        loss, grads = jax.value_and_grad(loss_fn)(params, mb)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    def update(r: Runner, _: Any) -> tuple[Runner, tuple[Any, Any, Any]]:
        obs_m = r.obs_m
        r, traj = jax.lax.scan(env_step, r, None, steps)
        raw_obs, x, action, logp, value, reward, done, bootstrap, ret, finished = traj
        rew_m = merge_moments(r.rew_m, ret.reshape(-1))
        reward = reward / jnp.sqrt(rew_m.var + 1e-8)
        _, last_value = net.apply(r.params, normalize(r.obs, obs_m))

        def gae(carry: Any, row: tuple[Any, ...]) -> tuple[Any, Any]:
            advantage, next_value = carry
            rew, val, dn, boot = row
            delta = rew + gamma * (next_value * (1 - dn) + boot) - val
            advantage = delta + gamma * lam * (1 - dn) * advantage
            return (advantage, val), advantage

        _, advantages = jax.lax.scan(
            gae, (jnp.zeros(n), last_value), (reward, value, done, bootstrap), reverse=True
        )
        data = (x, action, logp, advantages, advantages + value)

        def epoch(carry: Any, key: Any) -> tuple[Any, Any]:
            order = jax.random.permutation(key, batch)
            shuffled = jax.tree_util.tree_map(
                lambda a: a.reshape((batch, *a.shape[2:]))[order].reshape(
                    (args.num_minibatches, -1, *a.shape[2:])
                ),
                data,
            )
            return jax.lax.scan(minibatch_step, carry, shuffled)

        key, k_epochs = jax.random.split(r.key)
        (params, opt_state), losses = jax.lax.scan(
            epoch, (r.params, r.opt_state), jax.random.split(k_epochs, args.update_epochs)
        )
        if args.obs_norm:  # else the moments stay (0, 1): observations pass unchanged
            obs_m = merge_moments(obs_m, raw_obs.reshape(batch, -1))
        r = r._replace(params=params, opt_state=opt_state, obs_m=obs_m, rew_m=rew_m, key=key)
        return r, (losses.mean(), finished[0].sum(), finished[1].sum())

    def skip(r: Runner, _: Any) -> tuple[Runner, Any]:
        """No update: the tail of a short last chunk (zeros where update() reports)."""
        zeros = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), reports)
        return r, zeros

    def chunk_of_updates(r: Runner, active: Any) -> Any:
        """``active`` (<= chunk) updates in one program of ``chunk`` steps: the shorter last
        chunk reuses it instead of compiling a second program (seconds on a GPU)."""

        def body(r: Runner, i: Any) -> tuple[Runner, Any]:
            return jax.lax.cond(i < active, update, skip, r, None)  # type: ignore[no-any-return]

        return jax.lax.scan(body, r, jnp.arange(chunk))

    curve = Curve()
    start = time.perf_counter()
    runner = jax.jit(init)(jax.random.PRNGKey(args.seed))
    reports = jax.eval_shape(update, runner, None)[1]  # traced only, not compiled
    program = jax.jit(chunk_of_updates)
    loss = math.nan
    done_updates = 0
    for length in chunks:
        runner, (losses, ended, count) = program(runner, length)
        ended_sum, ended_count = float(ended.sum()), float(count.sum())  # waits for the device
        loss = float(losses[length - 1])
        done_updates += length
        mean_return = ended_sum / ended_count if ended_count else math.nan
        curve.add(done_updates * batch, time.perf_counter() - start, mean_return)
        print(
            f"update {done_updates}/{num_updates}  steps {done_updates * batch:,}  "
            f"episode return {mean_return:10.4f}  loss {loss:8.4f}  "
            f"({time.perf_counter() - start:.1f} s)",
            flush=True,
        )
        if args.time_limit is not None and time.perf_counter() - start > args.time_limit:
            break
    seconds = time.perf_counter() - start

    act = jax.jit(lambda params, obs_m, x: mode(net.apply(params, normalize(x, obs_m))[0]))
    params, obs_m = runner.params, runner.obs_m

    def policy(observations: Any, vec_env: Any) -> Any:
        return np.asarray(act(params, obs_m, jnp.asarray(flatten_numpy(observations))))

    result = Result(args.env_id, AGENT, n, done_updates * batch, seconds, loss, curve)
    return result, policy


def main(argv: Sequence[str] | None = None) -> Result:
    args = parse_args(__doc__.splitlines()[0], argv)
    require(
        "ppo_jax.py",
        'pip install "jax[cpu]" flax optax ./packages/sekai-jax',
        "flax",
        "jax",
        "optax",
        "sekai.jax",
    )
    # The final evaluation runs sekai.finance.baselines.evaluate, for the classic envs too.
    require("ppo_jax.py", "pip install ./packages/sekai-finance", "sekai.finance.baselines")
    return run(args, train)


if __name__ == "__main__":
    main()
