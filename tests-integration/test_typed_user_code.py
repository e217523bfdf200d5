"""User code that type-checks against sekai's public API, and runs.

``nox -s typecheck`` runs ``mypy --strict`` over this file as well as over the packages (see
``[tool.mypy] files``): each test here is code a user may write, so a wrong annotation in
sekai fails the type check, and pytest runs the same code to show the runtime accepts it. A
``# type: ignore[code]`` marks a line that must stay an error: with ``warn_unused_ignores``, a
line that stops being one fails the type check too.

NumPy's stubs type its scalars only for Python 3.11 and later, so the NumPy cases are checked
by ``nox -s typecheck-pythons`` (``typecheck`` checks against Python 3.10's stubs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from numpy.typing import NDArray

import sekai

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:

    def assert_type(value: object, expected: object) -> object:
        return value


pytestmark = pytest.mark.full


# -- seeds and counts: NumPy integers where the runtime takes them ------------------------------


class Walk(sekai.Env[NDArray[np.float32], np.int64]):
    """An env whose reset() is annotated as the base class's."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(
        self, *, seed: sekai.SeedLike = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        return sekai.ResetResult(self.rng.uniform(-1, 1, size=1).astype(np.float32))

    def step(self, action: np.int64) -> sekai.StepResult[NDArray[np.float32]]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False)


def test_numpy_integers_are_seeds_and_counts() -> None:
    rng = np.random.default_rng(0)
    seed, other_seed = rng.integers(0, 2**31), rng.integers(0, 2**31)  # NumPy ints
    env = sekai.make("CartPole-v1", max_episode_steps=np.int64(20))
    first = env.reset(seed=seed).observation
    np.testing.assert_array_equal(first, env.reset(seed=int(seed)).observation)
    assert env.spec is not None and env.spec.max_episode_steps == 20
    np.testing.assert_array_equal(
        Walk().reset(seed=np.int64(3)).observation, Walk().reset(seed=3).observation
    )
    limited = sekai.TimeLimit(sekai.make("CartPole-v1"), np.int64(10))
    assert limited.max_episode_steps == 10
    assert sekai.FrameStackObservation(sekai.make("CartPole-v1"), np.int64(4)).num_stack == 4
    assert sekai.ActionRepeat(sekai.make("CartPole-v1"), np.int64(2)).repeat == 2
    assert sekai.DelayObservation(sekai.make("CartPole-v1"), np.int32(1)).delay == 1
    assert sekai.DelayAction(sekai.make("CartPole-v1"), np.int64(1), noop=0).delay == 1
    assert sekai.InMemoryTracker(np.int64(5)).max_episodes == 5
    assert sekai.check_env(sekai.make("CartPole-v1").unwrapped, n_steps=np.int64(5)) == []
    assert sekai.make_seed_sequence(np.int64(0), np.int64(2)) == sekai.make_seed_sequence(0, 2)
    with sekai.make_vec("CartPole-v1", num_envs=np.int64(2)) as vec:
        assert vec.num_envs == 2
        vec.reset(seed=other_seed)
    with sekai.VecRecordEpisodeStatistics(
        sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync"), deque_size=np.int64(3)
    ) as recorded:
        assert recorded.tracker.max_episodes == 3


# -- Discrete actions ---------------------------------------------------------------------------


class Spread(sekai.Env[NDArray[np.float32], sekai.DiscreteAction]):
    """Typed as the quickstart suggests for code that steps with Python ints."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = sekai.Discrete(3, start=-1)

    def reset(
        self, *, seed: sekai.SeedLike = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32))

    def step(self, action: sekai.DiscreteAction) -> sekai.StepResult[NDArray[np.float32]]:
        return sekai.StepResult(np.zeros(2, np.float32), float(action), False, False)


class MeanReversion(sekai.Env[NDArray[np.float32], np.intp]):
    """The quickstart's type arguments, which keep holding a Discrete action space."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = sekai.Discrete(3, start=-1)

    def reset(
        self, *, seed: sekai.SeedLike = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32))

    def step(self, action: np.intp) -> sekai.StepResult[NDArray[np.float32]]:
        return sekai.StepResult(np.zeros(2, np.float32), float(action), False, False)


def test_discrete_actions_are_python_or_numpy_ints() -> None:
    env = Spread()
    env.reset(seed=0)
    assert env.step(1).reward == 1.0
    assert env.step(np.int64(-1)).reward == -1.0
    assert env.step(env.action_space.sample()).reward in (-1.0, 0.0, 1.0)
    typed: sekai.Env[NDArray[np.float32], sekai.DiscreteAction] = env
    assert typed.step(0).reward == 0.0
    space: sekai.Space[sekai.spaces.DiscreteAction] = sekai.Discrete(2)
    assert space.contains(1) and 1 in space
    assert sekai.check_env(Spread()) == []
    quickstart = MeanReversion()
    quickstart.reset(seed=0)
    assert quickstart.step(quickstart.action_space.sample()).reward in (-1.0, 0.0, 1.0)
    assert sekai.check_env(MeanReversion()) == []


# -- results: NumPy scalars as rewards and flags ------------------------------------------------


class Price(sekai.Env[NDArray[np.float32], sekai.DiscreteAction]):
    """Rewards and flags computed with NumPy, as check_env accepts them."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(0.0, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = sekai.Discrete(2)
        self.price = np.float64(1.0)

    def reset(
        self, *, seed: sekai.SeedLike = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult[NDArray[np.float32]]:
        self._set_rng(seed)
        self.price = np.float64(1.0)
        return sekai.ResetResult(np.array([self.price], np.float32))

    def step(self, action: sekai.DiscreteAction) -> sekai.StepResult[NDArray[np.float32]]:
        change = np.float32(self.rng.normal())
        self.price += abs(change)
        return sekai.StepResult(
            np.array([self.price], np.float32), change * action, self.price > 5.0, np.False_
        )


def test_numpy_rewards_and_flags_make_a_step_result() -> None:
    assert sekai.check_env(Price()) == []
    env = Price()
    result: sekai.ResetResult[Any] | sekai.StepResult[Any] = env.reset(seed=0)
    total = 0.0
    while not result.done:
        result = env.step(1)
        total += result.reward  # read as a float
        terminated: bool = result.terminated
    assert isinstance(result, sekai.StepResult)
    assert result.terminated and terminated and isinstance(result.terminated, np.bool_)
    assert total > 0.0


# -- episode statistics: trackers with and without env_index ------------------------------------


class PerEnvReturns:
    """statistics.md's per-episode tracker of a vector env: its hooks take ``env_index``."""

    def __init__(self) -> None:
        self.running: dict[int, float] = {}

    def on_reset(self, env_id: str | None, seed: int | None, *, env_index: int) -> None:
        self.running[env_index] = 0.0

    def on_step(
        self,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        *,
        env_index: int,
    ) -> None:
        self.running[env_index] += reward

    def on_episode_end(self, stats: sekai.EpisodeStats) -> None:
        pass

    def summary(self) -> dict[str, Any]:
        return {"running": dict(self.running)}


class Returns:
    """A tracker without ``env_index``, for single and vector envs alike."""

    def __init__(self) -> None:
        self.returns: list[float] = []

    def on_reset(self, env_id: str | None, seed: int | None) -> None:
        pass

    def on_step(
        self, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        pass

    def on_episode_end(self, stats: sekai.EpisodeStats) -> None:
        self.returns.append(stats.episode_return)

    def summary(self) -> dict[str, Any]:
        return {"episodes": len(self.returns)}


def test_trackers_of_both_shapes_keep_their_types() -> None:
    indexed = sekai.VecRecordEpisodeStatistics(
        sekai.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"),
        tracker=PerEnvReturns(),
    )
    assert_type(indexed.tracker, PerEnvReturns)
    with indexed:
        indexed.reset(seed=0)
        indexed.step(np.array([0, 1]))
        assert indexed.tracker.running == {0: 1.0, 1: 1.0}
    plain = sekai.VecRecordEpisodeStatistics(sekai.make_vec("CartPole-v1", 2), tracker=Returns())
    assert_type(plain.tracker, Returns)
    default = sekai.VecRecordEpisodeStatistics(sekai.make_vec("CartPole-v1", 2))
    assert_type(default.tracker, sekai.InMemoryTracker)
    swapping: sekai.VecRecordEpisodeStatistics[sekai.StatsTracker | sekai.IndexedStatsTracker]
    swapping = sekai.VecRecordEpisodeStatistics(sekai.make_vec("CartPole-v1", 2), Returns())
    swapping.tracker = PerEnvReturns()
    for vec in (plain, default, swapping):
        vec.close()
    single = sekai.RecordEpisodeStatistics(sekai.make("CartPole-v1"), tracker=Returns())
    assert_type(single.tracker, Returns)
    # A single env passes no env_index: an indexed tracker stays a type error there.
    unindexed = sekai.RecordEpisodeStatistics(
        sekai.make("CartPole-v1"),
        PerEnvReturns(),  # type: ignore[arg-type]
    )
    with pytest.raises(TypeError, match="env_index"):
        unindexed.reset(seed=0)


# -- the joint env package ----------------------------------------------------------------------


def test_the_joint_env_package_has_typed_names_and_no_others() -> None:
    from sekai.envs import CartPoleEnv
    from sekai.envs.finance import LimitOrderBookMarket

    market = sekai.envs.LimitOrderBookMarket(3)
    assert_type(market, LimitOrderBookMarket)
    assert market.agents == ["trader_0", "trader_1", "trader_2"]
    cartpole = CartPoleEnv()
    cartpole.reset(seed=0)
    assert_type(cartpole.step(1).observation, NDArray[np.float32])
    with pytest.raises(AttributeError):
        sekai.envs.LimitOrderBookMarkett  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError):
        from sekai.envs import NoSuchEnvAtAll  # type: ignore[attr-defined]  # noqa: F401
