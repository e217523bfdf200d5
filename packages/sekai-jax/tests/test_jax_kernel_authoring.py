"""What the "jax" mode, the functional API and ``sekai check --mode jax`` tell the author of a
kernel that breaks its rules: outputs of other shapes or dtypes than its spaces and state,
in-place updates, and derived params without ``derive(xp)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sekai.jax import FunctionalEnv, JaxVecEnv
from sekai.spaces import Box, Discrete
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_check import check_kernel_vec_env


@dataclass(frozen=True)
class BonusParams:
    goal: float = 3.0
    bonus: float = field(init=False)  # the reward at the goal: 1 / goal

    def __post_init__(self) -> None:
        if not self.goal > 0:
            raise ValueError(f"goal must be > 0, got {self.goal!r}")
        object.__setattr__(self, "bonus", 1.0 / self.goal)


class BonusWalk(ArrayKernel[BonusParams]):
    """Starts at 0, moves by +-1, ends at +-goal with reward ``bonus``; observes ``x[:, None]``."""

    def __init__(self, goal: float = 3.0) -> None:
        self.observation_space = Box(-10.0, 10.0, (1,))
        self.action_space = Discrete(2)
        self.params = self._params(goal)

    def _params(self, goal: float) -> BonusParams:
        return BonusParams(goal)

    def reset_draws(self, params: BonusParams) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"),)

    def reset(
        self, xp: Any, params: BonusParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = 0.0 * draws["u"]
        if state is not None:
            x = xp.where(mask, x, state["x"])
        return {"x": x}, x[:, None], {}

    def step(
        self, xp: Any, params: BonusParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"] + xp.where(action == 1, 1.0, -1.0)
        done = xp.abs(x) >= params.goal
        reward = xp.where(done, params.bonus + 0.0 * x, 0.0 * x)
        return {"x": x}, x[:, None], reward, done, xp.zeros_like(done), {}


@dataclass(frozen=True)
class DerivingParams(BonusParams):
    def derive(self, xp: Any) -> dict[str, Any]:
        return {"bonus": 1.0 / self.goal}


class DerivingWalk(BonusWalk):
    def _params(self, goal: float) -> BonusParams:
        return DerivingParams(goal)


def _reward_at_goal(env: FunctionalEnv, params: Mapping[str, Any]) -> float:
    state, _, _ = env.reset(jax.random.PRNGKey(0), params)
    t = env.step(jax.random.PRNGKey(1), state, jnp.ones(1, jnp.int32), params)
    return float(t.reward[0])


@pytest.mark.parametrize("kernel", [BonusWalk, DerivingWalk])
def test_concrete_functional_params_use_the_fields_their_dataclass_derives(
    kernel: type[BonusWalk],
) -> None:
    # Before: without derive(), the functional API kept the bonus of goal=3 (1/3) for goal=1,
    # where set_attr rebuilt the dataclass and paid 1.
    stateful = JaxVecEnv(kernel(), 1)
    stateful.reset(seed=0)
    stateful.set_attr("goal", 1.0)
    assert float(stateful.step(np.ones(1, np.int64)).rewards[0]) == 1.0
    env = FunctionalEnv(kernel(), 1)
    assert _reward_at_goal(env, {"goal": 1.0}) == 1.0
    assert _reward_at_goal(env, {}) == 0.0  # goal 3: not reached in one step
    with pytest.raises(ValueError, match="goal must be > 0"):  # the dataclass's own check
        env.reset(jax.random.PRNGKey(0), {"goal": -1.0})


def test_traced_params_of_a_dataclass_deriving_fields_without_derive_keep_the_built_ones() -> None:
    # The PureJaxRL pattern: the unchanged default params passed into jit run, with the
    # fields derived when the env was built (they were refused for a while).
    env = FunctionalEnv(BonusWalk(goal=1.0), 1)  # one step reaches the goal: reward 1 / 1
    traced = jax.jit(lambda params: _step_reward(env, params["goal"]))(env.default_params)
    assert float(traced) == 1.0
    deriving = FunctionalEnv(DerivingWalk(), 1)
    rewards = jax.vmap(lambda goal: _step_reward(deriving, goal))(jnp.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(rewards, [1.0, 0.0, 0.0])


def _step_reward(env: FunctionalEnv, goal: jax.Array) -> jax.Array:
    params = {"goal": goal}
    state, _, _ = env.reset(jax.random.PRNGKey(0), params)
    return env.step(jax.random.PRNGKey(1), state, jnp.ones(1, jnp.int32), params).reward[0]


class _FlatObs(BonusWalk):
    def step(self, xp: Any, params: BonusParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs[:, 0], reward, terminated, truncated, info


class _ExtraKey(BonusWalk):
    def step(self, xp: Any, params: BonusParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, *rest = super().step(xp, params, state, action, draws)
        return ({**new, "n": new["x"] * 0.0}, *rest)


class _FloatTerminated(BonusWalk):
    def step(self, xp: Any, params: BonusParams, state: Any, action: Any, draws: Any) -> KernelStep:
        new, obs, reward, terminated, truncated, info = super().step(
            xp, params, state, action, draws
        )
        return new, obs, reward, xp.astype(terminated, reward.dtype), truncated, info


@pytest.mark.parametrize(
    ("kernel", "issue"),
    [
        (_FlatObs, "the observation has shape (4,), the space's is (4, 1)"),
        (_ExtraKey, "the state step returned has keys ['n', 'x'], the state it was given has "
         "['x']"),
        (_FloatTerminated, "terminated has dtype float32, expected bool"),
    ],
)  # fmt: skip
def test_the_jax_mode_names_the_kernel_output_that_breaks_the_contract(
    kernel: type[BonusWalk], issue: str
) -> None:
    # Before: lax.cond's "branches must have equal output types" at sekai's reset_finished,
    # a pytree structure error, or jnp's "or does not accept dtype float32".
    envs = JaxVecEnv(kernel(), 4)
    envs.reset(seed=0)
    with pytest.raises(ValueError) as error:
        envs.step(np.ones(4, np.int64))
    assert str(error.value).startswith(
        f"{kernel.__name__}.step returned what no driver can run: {issue} ("
    )


class _InPlaceReset(BonusWalk):
    def reset(
        self, xp: Any, params: BonusParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = 0.0 * draws["u"]
        if state is not None:
            old = state["x"]
            old[mask] = x[mask]  # jax arrays refuse it; numpy's read-only ones too
            x = old
        return {"x": x}, x[:, None], {}


class _InPlaceStep(BonusWalk):
    def step(self, xp: Any, params: BonusParams, state: Any, action: Any, draws: Any) -> KernelStep:
        x = state["x"]
        x += xp.where(action == 1, 1.0, -1.0)  # jax rebinds x: runs, unlike torch
        done = xp.abs(x) >= params.goal
        reward = xp.where(done, params.bonus + 0.0 * x, 0.0 * x)
        return {"x": x}, x[:, None], reward, done, xp.zeros_like(done), {}


@pytest.mark.parametrize(("kernel", "call"), [(_InPlaceStep, "step"), (_InPlaceReset, "reset")])
def test_the_jax_mode_check_reports_an_in_place_update_from_the_numpy_reference(
    kernel: type[BonusWalk], call: str
) -> None:
    # Before, `sekai check --mode jax` passed the in-place step (JAX rebinds the name).
    issues = check_kernel_vec_env(lambda: JaxVecEnv(kernel(), 4), n_steps=30)
    assert len(issues) == 1
    assert issues[0].startswith(
        f"ERROR: the numpy reference driver (KernelVecEnv, float32): ValueError: "
        f"{kernel.__name__}.{call} wrote into an array it was given"
    )
