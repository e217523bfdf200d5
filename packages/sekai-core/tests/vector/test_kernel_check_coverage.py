"""What ``check_kernel_vec_env`` (``sekai check --mode``) reports for a mode that does not
freeze finished sub-envs' infos, a kernel whose partial reset changes the state's keys, and a
rollout in which no episode ends."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sekai.spaces import Box, Discrete
from sekai.vector.kernel import ArrayKernel, Draw, KernelReset, KernelStep
from sekai.vector.kernel_check import check_kernel_vec_env
from sekai.vector.kernel_vec_env import KernelVecEnv


@dataclass(frozen=True)
class _Steps:
    steps: np.ndarray = field(default_factory=lambda: np.array([1.0, -1.0]))


class _Walk(ArrayKernel[_Steps]):
    """Moves by ``steps[action]`` from a uniform start in [0, 1); an episode ends once
    ``|x| > limit`` (with limit 0: at every step)."""

    def __init__(self, limit: float) -> None:
        self.observation_space = Box(-100.0, 100.0, (1,))
        self.action_space = Discrete(2)
        self.params = _Steps()
        self.limit = limit

    def reset_draws(self, params: _Steps) -> tuple[Draw, ...]:
        return (Draw("u", "uniform"),)

    def reset(
        self, xp: Any, params: _Steps, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        x = draws["u"]
        if state is not None:
            x = xp.where(mask, x, state["x"])
        return {"x": x}, x[:, None], {}

    def step(
        self, xp: Any, params: _Steps, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        x = state["x"] + xp.take(params.steps, action, axis=0)
        done = xp.abs(x) > self.limit
        return {"x": x}, x[:, None], x, done, xp.zeros_like(done), {}


def test_a_well_behaved_kernel_gets_no_issue() -> None:
    assert check_kernel_vec_env(lambda: KernelVecEnv(_Walk(limit=0.0), 3), n_steps=5) == []


class _InfoWhenFrozenMode(KernelVecEnv):
    """A broken mode: with autoreset=False its finished sub-envs keep reporting an info."""

    def step(self, actions: Any) -> Any:
        out = super().step(actions)
        if self.autoreset:
            return out
        return out._replace(infos=[{"stale": True}] * self.num_envs)


def test_the_freezing_check_reports_a_finished_sub_env_whose_info_is_not_empty() -> None:
    # Every episode ends at step 0; sub-env 0 is the first frozen one looked at, at step 1.
    issues = check_kernel_vec_env(lambda: _InfoWhenFrozenMode(_Walk(limit=0.0), 3), n_steps=5)
    assert issues == [
        "ERROR: autoreset=False: step 1: sub-env 0 ended its episode but did not freeze (same "
        "observation, reward 0, still done, info {})."
    ]


class _ResetAddsAKey(_Walk):
    """A broken kernel: its reset with a mask returns a state with a key its step lacks (a
    structure that ``lax.cond`` under JAX refuses)."""

    def reset(
        self, xp: Any, params: _Steps, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        new, obs, info = super().reset(xp, params, draws, mask, state)
        if state is not None:
            new = {**new, "extra": new["x"] * 0}
        return new, obs, info


def test_the_mask_check_reports_a_partial_reset_that_changes_the_states_keys() -> None:
    # In 5 steps no episode ends, so the rollout never resets with a mask: the mask check's
    # own call of the kernel finds it.
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_ResetAddsAKey(limit=3.0), 3), n_steps=5)
    assert issues == [
        "WARNING: no episode ended in 5 steps: autoreset was not checked (pass more steps).",
        "ERROR: reset(mask=...) of the kernel: the state has keys ['extra', 'x'], its step's has "
        "['x'].",
    ]
    # Once an episode ends (step 9), the driver refuses the first partial reset itself.
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_ResetAddsAKey(limit=3.0), 3), n_steps=20)
    assert len(issues) == 1 and issues[0].startswith(
        "ERROR: step 9 raised ValueError: _ResetAddsAKey.reset returned what no driver can run: "
        "the state reset returned has keys ['extra', 'x'], the state it was given has ['x']"
    )


def test_a_rollout_in_which_no_episode_ends_warns_that_autoreset_was_not_checked() -> None:
    issues = check_kernel_vec_env(lambda: KernelVecEnv(_Walk(limit=1e9), 3), n_steps=5)
    assert issues == [
        "WARNING: no episode ended in 5 steps: autoreset was not checked (pass more steps)."
    ]


def test_without_autoreset_no_episode_ending_is_no_warning() -> None:
    # The warning is about the autoreset check, which a mode built without autoreset skips.
    def make() -> KernelVecEnv:
        return KernelVecEnv(_Walk(limit=1e9), 3, autoreset=False)

    assert check_kernel_vec_env(make, n_steps=5) == []
