"""Checkpoints of the native Trading-v0 / Portfolio-v0 envs, as seeding.md describes them.

They draw their normals ahead in blocks, so ``vec.rng``'s state alone is not their random state:
a pickled or deep-copied env continues exactly as the original, and ``reset(seed=...)`` replays.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

import sekai
from sekai.vector._conformance import Trajectory, assert_same_trajectory

IDS = ["Trading-v0", "Portfolio-v0"]


def _actions(vec: Any, n: int) -> list[Any]:
    space = vec.batch_action_space
    space.seed(1)
    return [space.sample() for _ in range(n)]


def _run(vec: Any, actions: list[Any], seed: int | None = None) -> Trajectory:
    trajectory: Trajectory = [("reset", vec.reset(seed=seed))]
    trajectory += [("step", vec.step(action)) for action in actions]
    return trajectory


def _pickled(vec: Any) -> Any:
    return pickle.loads(pickle.dumps(vec))


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("checkpoint", [copy.deepcopy, _pickled])
def test_a_pickled_or_copied_native_env_continues_as_the_original(
    env_id: str, checkpoint: Callable[[Any], Any]
) -> None:
    vec = sekai.make_vec(env_id, num_envs=2)
    assert type(vec).__name__ in ("TradingVecEnv", "PortfolioVecEnv")
    actions = _actions(vec, 60)
    _run(vec, actions[:5], seed=0)  # part of a block of normals is used
    saved = checkpoint(vec)
    # Unseeded resets and steps continue from the generator and the block, autoresets included.
    assert_same_trajectory(_run(vec, actions), _run(saved, actions))
    assert_same_trajectory(_run(vec, actions), _run(saved, actions))


@pytest.mark.parametrize("env_id", IDS)
def test_reset_with_a_seed_replays_after_normals_were_drawn_ahead(env_id: str) -> None:
    vec = sekai.make_vec(env_id, num_envs=2)
    actions = _actions(vec, 60)
    first = _run(vec, actions, seed=3)
    _run(vec, actions)  # more of the block is used by an unseeded episode
    assert_same_trajectory(first, _run(vec, actions, seed=3))
    assert_same_trajectory(first, _run(sekai.make_vec(env_id, num_envs=2), actions, seed=3))
