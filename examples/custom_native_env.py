"""A custom environment and its native vector version, registered, checked and timed.

Run: ``python examples/custom_native_env.py``

The environment trades a mean-reverting spread (an Ornstein-Uhlenbeck process): observe the
spread and the current position, then go short, flat or long. ``SpreadEnv`` is the single
environment; ``SpreadVecEnv`` simulates ``num_envs`` of them at once with NumPy. Registered
with ``vector_entry_point``, ``sekai.make_vec()`` builds the native version by default.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

import sekai
from sekai.testing import assert_env_conforms

THETA, SIGMA, COST = 0.1, 0.2, 0.01  # mean reversion per step, noise per step, cost per unit traded


def _spaces() -> tuple[sekai.Box, sekai.Discrete]:
    observation_space = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
    return observation_space, sekai.Discrete(3, start=-1)  # -1 short, 0 flat, +1 long


class SpreadEnv(sekai.Env[NDArray[np.float32], sekai.DiscreteAction]):
    """Trade a mean-reverting spread; the reward is the position times the spread's change.

    Args:
        theta: mean-reversion speed per step.
        sigma: standard deviation of the spread's noise per step.
        cost: cost per unit of position traded.
        horizon: steps per episode.
    """

    def __init__(
        self, theta: float = THETA, sigma: float = SIGMA, cost: float = COST, horizon: int = 100
    ) -> None:
        self.observation_space, self.action_space = _spaces()
        self.theta, self.sigma, self.cost, self.horizon = theta, sigma, cost, horizon
        self.spread, self.position, self.t = 0.0, 0, 0

    def reset(
        self,
        *,
        seed: sekai.SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> sekai.ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        self.spread = float(self.rng.normal(0.0, self.sigma / np.sqrt(2 * self.theta)))
        self.position, self.t = 0, 0
        return sekai.ResetResult(self._observe(), {})

    def step(self, action: sekai.DiscreteAction) -> sekai.StepResult[NDArray[np.float32]]:
        if not self.action_space.contains(action):
            raise sekai.InvalidAction(action, self.action_space)
        traded = abs(int(action) - self.position)
        self.position = int(action)
        change = -self.theta * self.spread + self.sigma * float(self.rng.standard_normal())
        self.spread += change
        self.t += 1
        reward = self.position * change - self.cost * traded
        return sekai.StepResult(self._observe(), reward, False, self.t >= self.horizon, {})

    def _observe(self) -> NDArray[np.float32]:
        return np.array([self.spread, self.position], dtype=np.float32)


class SpreadVecEnv(sekai.NativeVecEnv):
    """``num_envs`` copies of ``SpreadEnv`` stepped together with array operations.

    Takes the single env's keyword arguments, plus ``autoreset`` and ``max_episode_steps``,
    which it passes to ``NativeVecEnv`` (``make_vec`` passes both).
    """

    def __init__(
        self,
        num_envs: int,
        *,
        theta: float = THETA,
        sigma: float = SIGMA,
        cost: float = COST,
        horizon: int = 100,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        observation_space, action_space = _spaces()
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.theta, self.sigma, self.cost, self.horizon = theta, sigma, cost, horizon
        self.spread = np.zeros(num_envs)
        self.position = np.zeros(num_envs, dtype=np.int64)
        self.t = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        stationary = self.sigma / np.sqrt(2 * self.theta)
        self.spread[indices] = self.rng.normal(0.0, stationary, size=len(indices))
        self.position[indices] = 0
        self.t[indices] = 0

    def _observe(self) -> NDArray[np.float32]:
        return np.stack([self.spread, self.position], axis=1).astype(np.float32)  # a new array

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        actions = np.asarray(actions, dtype=np.int64)
        live = ~self.frozen  # finished sub-envs (autoreset=False) keep their final state
        traded = np.abs(actions - self.position) * live
        self.position = np.where(live, actions, self.position)
        noise = self.rng.standard_normal(self.num_envs)
        change = (-self.theta * self.spread + self.sigma * noise) * live
        self.spread = self.spread + change
        self.t = self.t + live
        rewards = self.position * change - self.cost * traded
        return rewards, np.zeros(self.num_envs, bool), self.t >= self.horizon, {}


def reversion_policy(observations: NDArray[np.float32]) -> NDArray[np.int64]:
    """Bet that the spread reverts: short when it is above 0.1, long below -0.1."""
    spread = observations[..., 0]
    return np.where(spread > 0.1, -1, np.where(spread < -0.1, 1, 0)).astype(np.int64)


def mean_return(vec: sekai.VecEnv, seed: int) -> float:
    """Run one episode per sub-env (autoreset off) and return the mean episode return."""
    result = vec.reset(seed=seed)
    totals, done = np.zeros(vec.num_envs), np.zeros(vec.num_envs, bool)
    while not done.all():
        result = vec.step(reversion_policy(result.observations))
        totals += np.where(done, 0.0, result.rewards)
        done |= result.dones
    return float(totals.mean())


def steps_per_second(vec: sekai.VecEnv, calls: int = 300) -> float:
    vec.batch_action_space.seed(0)
    actions = [vec.batch_action_space.sample() for _ in range(32)]
    vec.reset(seed=0)
    start = time.perf_counter()
    for i in range(calls):
        vec.step(actions[i % len(actions)])
    return calls * vec.num_envs / (time.perf_counter() - start)


def main() -> None:
    sekai.register("examples/Spread-v0", SpreadEnv, vector_entry_point=SpreadVecEnv)

    # 1. Both versions pass the Env contract (the native one through its batched spaces).
    assert_env_conforms("examples/Spread-v0")
    print("check: examples/Spread-v0 and SpreadVecEnv conform")

    # 2. make_vec picks the native version; the other backends build SpreadEnv sub-envs.
    native = sekai.make_vec("examples/Spread-v0", 512, vector_kwargs={"autoreset": False})
    sync = sekai.make_vec(
        "examples/Spread-v0", 512, vectorization_mode="sync", vector_kwargs={"autoreset": False}
    )
    print(f"backends: {native}, {sync}")

    # 3. Same dynamics, different random draws: the mean returns agree within noise.
    native_mean, sync_mean = mean_return(native, seed=0), mean_return(sync, seed=0)
    print(f"reversion policy: native {native_mean:.3f}, sync {sync_mean:.3f} per episode")

    # 4. The point of a native env: one NumPy call per step for all sub-envs.
    for vec in (native, sync):
        vec.close()
    with (
        sekai.make_vec("examples/Spread-v0", 512) as fast,
        sekai.make_vec("examples/Spread-v0", 512, vectorization_mode="sync") as slow,
    ):
        ratio = steps_per_second(fast) / steps_per_second(slow, calls=30)
    print(f"throughput: native is {ratio:.0f} times SyncVecEnv at 512 sub-envs")


if __name__ == "__main__":
    main()
