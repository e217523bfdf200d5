"""The built-in vector wrappers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest

import sekai
from sekai.stats import InMemoryTracker
from sekai.utils._equal import structurally_equal
from sekai.vector import (
    SyncVecEnv,
    VecNormalizeObservation,
    VecNormalizeReward,
    VecRecordEpisodeStatistics,
    VecTransformObservation,
    VecTransformReward,
    wrappers as vector_wrappers,
)
from sekai.vector._conformance import GOAL, CounterEnv, CounterVecEnv
from sekai.vector.result import info_at
from sekai.wrappers.normalize_reward import return_scale


class Tracker:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_reset(self, env_id: Any, seed: Any) -> None:
        self.events.append(("reset", env_id, seed))

    def on_step(self, reward: Any, terminated: Any, truncated: Any, info: Any) -> None:
        self.events.append(("step", reward))

    def on_episode_end(self, stats: Any) -> None:
        self.events.append(("end", stats.extra.get("env_index"), stats.episode_return))

    def summary(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize("native", [False, True])
def test_record_episode_statistics_records_each_episode(native: bool) -> None:
    inner = CounterVecEnv(2) if native else SyncVecEnv([CounterEnv] * 2)
    vec = VecRecordEpisodeStatistics(inner)
    vec.reset(options=[{"start": GOAL - 2}, {"start": 0}])
    vec.step([1, 1])
    result = vec.step([1, 1])
    stats = result.infos[0]["episode"]
    assert isinstance(stats, sekai.EpisodeStats)
    assert stats.episode_length == 2
    assert stats.episode_return == pytest.approx((0.5 - 0.1) + (0.5 - 0.2))
    assert stats.terminated and not stats.truncated
    assert stats.extra == {"env_index": 0}
    assert "episode" not in result.infos[1]
    assert vec.tracker.summary()["num_episodes"] == 1  # type: ignore[attr-defined]


def test_record_episode_statistics_records_a_frozen_episode_once() -> None:
    vec = VecRecordEpisodeStatistics(SyncVecEnv([CounterEnv] * 2, autoreset=False))
    vec.reset(options=[{"start": GOAL - 1}, {"start": GOAL - 3}])
    episodes = []
    for _ in range(6):
        result = vec.step([1, 1])
        episodes += [(i, x["episode"]) for i, x in enumerate(result.infos) if "episode" in x]
    assert [(i, s.episode_length) for i, s in episodes] == [(0, 1), (1, 3)]


def test_record_episode_statistics_calls_a_custom_tracker() -> None:
    tracker = Tracker()
    vec = VecRecordEpisodeStatistics(SyncVecEnv([CounterEnv] * 2), tracker=tracker)
    vec.reset(seed=3, options=[{"start": GOAL - 1}, {"start": 0}])
    vec.step([1, 0])
    seeds = sekai.make_seed_sequence(3, 2)
    assert tracker.events == [
        ("reset", None, seeds[0]),
        ("reset", None, seeds[1]),
        ("step", pytest.approx(0.4)),
        ("step", pytest.approx(-0.1)),
        ("end", 0, pytest.approx(0.4)),
        ("reset", None, seeds[0]),  # the autoreset of sub-env 0: its stream continues
    ]


def _seeds_reported(vec: VecRecordEpisodeStatistics, seed: Any) -> list[Any]:
    tracker = vec.tracker
    assert isinstance(tracker, Tracker)
    tracker.events.clear()
    vec.reset(seed=seed)
    return [seed for kind, _, seed in tracker.events if kind == "reset"]


def test_record_episode_statistics_reports_the_seeds_sub_envs_were_reset_with() -> None:
    vec = VecRecordEpisodeStatistics(SyncVecEnv([CounterEnv] * 2), tracker=Tracker())
    assert _seeds_reported(vec, 3) == vec.get_attr("_rng_seed") == sekai.make_seed_sequence(3, 2)
    assert _seeds_reported(vec, np.array([7, 8])) == [7, 8]
    assert _seeds_reported(vec, None) == [7, 8] == vec.get_attr("_rng_seed")  # kept
    generator = np.random.default_rng(0)
    seeds = _seeds_reported(vec, [None, generator])
    assert seeds == [7, vec.get_attr("_rng_seed")[1]]
    assert seeds[1] == np.random.default_rng(0).integers(2**63)  # drawn once, by the backend
    assert generator.integers(2**63) == np.random.default_rng(0).integers(2**63, size=2)[1]


def test_record_episode_statistics_reports_a_native_envs_generator_seed() -> None:
    vec = VecRecordEpisodeStatistics(CounterVecEnv(2), tracker=Tracker())
    assert _seeds_reported(vec, 3) == [3, 3]  # one generator, seeded with 3: reset(seed=3) replays
    assert _seeds_reported(vec, None) == [3, 3]  # its stream continues


@pytest.mark.parametrize("native", [False, True])
def test_record_episode_statistics_reports_each_entry_of_a_seed_list_on_every_backend(
    native: bool,
) -> None:
    # A native env combines the list into one seed, yet each sub-env was reset with its entry
    # as a sub-env of any other backend is: trackers are told the same seeds.
    venv = CounterVecEnv(2) if native else SyncVecEnv([CounterEnv] * 2)
    vec = VecRecordEpisodeStatistics(venv, tracker=Tracker())
    assert _seeds_reported(vec, [7, 8]) == [7, 8]
    assert _seeds_reported(vec, [None, np.int64(9)]) == [7, 9]  # None keeps the recorded seed
    assert _seeds_reported(vec, [None, None]) == [7, 9]
    seeds = _seeds_reported(vec, [np.random.default_rng(0), None])
    assert seeds == [np.random.default_rng(0).integers(2**63), 9]  # its one draw


@pytest.mark.parametrize("native", [False, True])
def test_record_episode_statistics_reports_every_autoreset_like_a_single_env(
    native: bool,
) -> None:
    single = sekai.AutoReset(sekai.RecordEpisodeStatistics(CounterEnv(), tracker=Tracker()))
    inner = CounterVecEnv(2) if native else SyncVecEnv([CounterEnv] * 2)
    vec = VecRecordEpisodeStatistics(inner, tracker=Tracker())
    single.reset(seed=0)
    vec.reset(seed=0)
    for _ in range(40):  # both sub-envs follow the single env's trajectory
        single.step(2)
        vec.step([2, 2])
    ours = [event[:2] for event in vec.tracker.events if event[0] != "step"]  # type: ignore[attr-defined]
    theirs = [event[0] for event in single.get_attr("tracker").events if event[0] != "step"]
    assert theirs.count("end") >= 2 and theirs[1:] == ["end", "reset"] * theirs.count("end")
    episode = [("end", 0), ("reset", None), ("end", 1), ("reset", None)]  # env_id None
    assert ours == [("reset", None)] * 2 + episode * theirs.count("end")
    seeds = [event[2] for event in vec.tracker.events if event[0] == "reset"]  # type: ignore[attr-defined]
    recorded = [0, 0] if native else sekai.make_seed_sequence(0, 2)  # kept by every autoreset
    assert seeds == recorded * (1 + theirs.count("end"))


@pytest.mark.parametrize("backend", ["sync", "async", "proc"])
def test_record_episode_statistics_reports_the_seeds_a_sub_envs_own_wrapper_reports(
    backend: str,
) -> None:
    # Autoresets and unseeded resets keep each sub-env's recorded seed, as they keep an env's.
    def build(fn: Callable[[], Any]) -> Any:
        if backend == "proc":
            return sekai.ProcVecEnv([fn] * 2, num_workers=1, context="fork")
        return (SyncVecEnv if backend == "sync" else sekai.AsyncVecEnv)([fn] * 2)

    def run(vec: Any) -> None:
        with vec:
            vec.reset(seed=5, options={"start": GOAL - 2})
            for _ in range(2):  # both episodes end: autoresets
                vec.step([1, 1])
            vec.reset()
            vec.reset(seed=[None, 6])

    def seeds(tracker: Tracker) -> list[Any]:
        return [event[2] for event in tracker.events if event[0] == "reset"]

    first, second = sekai.make_seed_sequence(5, 2)
    expected = [first, second] * 3 + [first, 6]  # resets, autoresets, unseeded, a list
    inner = Tracker()  # one tracker in both sub-envs, which a SyncVecEnv steps in order
    run(SyncVecEnv([lambda: sekai.RecordEpisodeStatistics(CounterEnv(), tracker=inner)] * 2))
    assert seeds(inner) == expected
    outer = VecRecordEpisodeStatistics(build(CounterEnv), tracker=Tracker())
    run(outer)
    assert seeds(outer.tracker) == expected


def test_record_episode_statistics_reports_no_reset_for_a_frozen_sub_env() -> None:
    fns = [CounterEnv, lambda: sekai.AutoReset(CounterEnv())]  # the second resets itself
    vec = VecRecordEpisodeStatistics(SyncVecEnv(fns, autoreset=False), tracker=Tracker())
    vec.reset(options={"start": GOAL - 1})
    vec.step([1, 1])
    vec.step([1, 1])
    events = [event[:2] for event in vec.tracker.events if event[0] != "step"]  # type: ignore[attr-defined]
    assert events == [("reset", None)] * 2 + [("end", 0), ("end", 1), ("reset", None)]


def test_normalize_observation_shares_statistics_across_sub_envs() -> None:
    vec = VecNormalizeObservation(SyncVecEnv([CounterEnv] * 4))
    result = vec.reset(options=[{"start": s} for s in (0, 2, 4, 6)])
    assert vec.observation_space == sekai.Box(-np.inf, np.inf, shape=(3,), dtype=np.float64)
    assert result.observations.dtype == np.float64
    assert result.observations[:, 0].mean() == pytest.approx(0.0)
    assert vec.obs_rms.mean.tolist() == [3.0, 0.0, 1.0]  # type: ignore[attr-defined]


def test_normalize_observation_final_observation_uses_current_stats_without_update() -> None:
    vec = VecNormalizeObservation(CounterVecEnv(2))
    vec.reset(options=[{"start": GOAL - 1}, {"start": 0}])
    result = vec.step([1, 1])
    rms = vec.obs_rms
    count = rms.count  # type: ignore[attr-defined]
    final = result.infos[0]["final_observation"]
    expected = (np.array([GOAL, 1, 1]) - rms.mean) / np.sqrt(rms.var + 1e-8)  # type: ignore[attr-defined]
    assert final == pytest.approx(expected)
    assert rms.count == count  # type: ignore[attr-defined]


def _counter_in_a_dict() -> sekai.Env[Any, Any]:
    env = CounterEnv()
    space = sekai.Dict(x=env.observation_space)
    return sekai.TransformObservation(env, lambda o: {"x": o}, space)


@pytest.mark.parametrize("space", ["box", "dict"])
def test_normalize_observation_counts_a_step_ending_episodes_once_per_sub_env(space: str) -> None:
    # The terminal observations left by autoreset are normalised, not counted: a step adds
    # exactly num_envs samples to the statistics (a Box batch and a Dict's per-row path).
    vec = VecNormalizeObservation(
        SyncVecEnv([_counter_in_a_dict if space == "dict" else CounterEnv] * 2)
    )
    vec.reset(options=[{"start": GOAL - 1}, {"start": GOAL - 2}])
    rms = vec.obs_rms["x"] if space == "dict" else vec.obs_rms
    counts: list[float] = []
    finals: list[list[Any]] = []
    for _ in range(2):  # sub-env 0 ends at the first step, sub-env 1 at the second
        result = vec.step([1, 1])
        counts.append(rms.count)
        finals.append(
            [info["final_observation"] for info in result.infos if "final_observation" in info]
        )
    assert counts == [4, 6]
    assert [len(f) for f in finals] == [1, 1]
    final = finals[1][0]["x"] if space == "dict" else finals[1][0]
    expected = (np.array([GOAL, 2, 1]) - rms.mean) / np.sqrt(rms.var + 1e-8)
    assert final == pytest.approx(expected)


def test_normalize_observation_can_be_frozen_and_checkpointed() -> None:
    vec = VecNormalizeObservation(SyncVecEnv([CounterEnv] * 2), stats="ewm", halflife=2.0)
    vec.reset(seed=0)
    vec.update_running_mean = False
    state = vec.state_dict()
    vec.step([1, 1])
    assert vec.state_dict()["obs_rms"]["count"] == state["obs_rms"]["count"]
    vec.update_running_mean = True
    vec.step([1, 1])
    assert vec.state_dict()["obs_rms"]["count"] != state["obs_rms"]["count"]
    vec.load_state_dict(state)
    assert vec.state_dict()["obs_rms"]["count"] == state["obs_rms"]["count"]


def test_normalize_observation_ignores_frozen_sub_envs_in_its_statistics() -> None:
    raw = SyncVecEnv([CounterEnv] * 2, autoreset=False)
    vec = VecNormalizeObservation(SyncVecEnv([CounterEnv] * 2, autoreset=False))
    starts = [{"start": GOAL - 1}, {"start": 0}]
    rms = sekai.RunningMeanStd(shape=(3,))
    rms.update(raw.reset(options=starts).observations)
    vec.reset(options=starts)
    for step in range(3):  # sub-env 0 ends at the first step (counted), then stays frozen
        observations = raw.step([1, 1]).observations
        rms.update(observations if step == 0 else observations[1:])
        vec.step([1, 1])
    assert vec.obs_rms.count == pytest.approx(rms.count)
    assert vec.obs_rms.mean == pytest.approx(rms.mean)
    assert vec.obs_rms.var == pytest.approx(rms.var)


def test_normalize_observation_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="stats must be 'running' or 'ewm'"):
        VecNormalizeObservation(SyncVecEnv([CounterEnv]), stats="foo")


def test_normalize_reward_divides_by_the_std_of_discounted_returns() -> None:
    vec = VecNormalizeReward(SyncVecEnv([CounterEnv] * 2), gamma=0.5)
    vec.reset(seed=0)
    rms = sekai.RunningMeanStd()
    returns = np.zeros(2)
    for _ in range(5):
        result = vec.step([2, 1])
        steps = np.array(vec.get_attr("steps"), dtype=float)
        raw = np.array([1.0, 0.5]) - 0.1 * steps
        returns = 0.5 * returns + raw
        rms.update(returns)
        assert result.rewards == pytest.approx(raw / np.sqrt(rms.var + 1e-8))
    with pytest.raises(ValueError, match="gamma"):
        VecNormalizeReward(SyncVecEnv([CounterEnv]), gamma=2.0)


def test_normalize_reward_restarts_the_returns_on_a_reset_in_the_middle_of_an_episode() -> None:
    vec = VecNormalizeReward(SyncVecEnv([CounterEnv] * 2), gamma=0.5)
    vec.reset(options={"start": 0})
    for _ in range(3):
        vec.step([2, 2])  # rewards 0.9, 0.8, 0.7: the discounted returns 0.9, 1.25, 1.325
    vec.reset(options={"start": 0})
    vec.step([2, 2])  # a new episode's first return: its reward, 0.9
    assert vec.return_rms.count == 8
    assert vec.return_rms.mean == pytest.approx(np.mean([0.9, 1.25, 1.325, 0.9]))


def test_normalize_reward_restarts_the_returns_after_a_truncation_as_the_single_env_one() -> None:
    def make() -> Any:
        return sekai.TimeLimit(CounterEnv(), 2)  # action 0: truncated every 2 steps

    vec = VecNormalizeReward(SyncVecEnv([make]), gamma=1.0)
    vec.reset(seed=0)
    single = sekai.NormalizeReward(sekai.AutoReset(make()), gamma=1.0)
    single.reset(seed=0)
    for _ in range(6):
        vec.step([0])
        single.step(0)
    # rewards -0.1, -0.2 per episode: the returns -0.1, -0.3, then from 0 again
    assert vec.return_rms.mean == pytest.approx(-0.2)
    assert vec.return_rms.var == pytest.approx(0.01)
    assert vec.return_rms.mean == pytest.approx(single.return_rms.mean)
    assert vec.return_rms.var == pytest.approx(single.return_rms.var)


def test_normalize_reward_passes_rewards_unscaled_while_returns_have_no_spread() -> None:
    # The first step's returns are all equal (variance 0): dividing by sqrt(1e-8) would
    # multiply them by 10,000.
    vec = VecNormalizeReward(SyncVecEnv([CounterEnv] * 3), gamma=0.5)
    vec.reset(seed=0)
    assert vec.step([1, 1, 1]).rewards.tolist() == pytest.approx([0.4, 0.4, 0.4])
    assert vec.return_rms.var < 1e-30  # not exactly 0: three equal returns, rounded
    second = vec.step([2, 1, 1]).rewards  # now spread: scaled
    assert second.tolist() != pytest.approx([0.8, 0.3, 0.3])
    assert second == pytest.approx(np.array([0.8, 0.3, 0.3]) / np.sqrt(vec.return_rms.var + 1e-8))


def test_normalize_reward_ignores_frozen_sub_envs_in_its_statistics() -> None:
    vec = VecNormalizeReward(SyncVecEnv([CounterEnv] * 2, autoreset=False))
    vec.reset(options=[{"start": GOAL - 1}, {"start": 0}])
    vec.step([1, 1])
    count = vec.return_rms.count
    vec.step([1, 1])
    assert vec.return_rms.count == pytest.approx(count + 1)


def test_transform_wrappers_apply_their_functions() -> None:
    new_space = sekai.Box(-1000.0, 0.0, shape=(3,))
    vec = VecTransformReward(
        VecTransformObservation(SyncVecEnv([CounterEnv] * 2), lambda b: -b, new_space),
        fn=lambda r: r + 1,
    )
    assert vec.observation_space == new_space
    assert vec.reset(options={"start": 4}).observations[0].tolist() == [-4.0, -0.0, -1.0]
    result = vec.step([0, 2])
    assert result.rewards.tolist() == pytest.approx([0.9, 1.9])
    with pytest.raises(TypeError, match="both"):
        VecTransformReward(SyncVecEnv([CounterEnv]), lambda r: r, fn=lambda r: r)


def test_transform_observation_refuses_a_new_space_that_is_not_a_sekai_space() -> None:
    venv = SyncVecEnv([CounterEnv] * 2)
    with pytest.raises(
        TypeError,
        match=r"^VecTransformObservation: new_observation_space must be a sekai.Space, got str.$",
    ):
        VecTransformObservation(venv, lambda b: b, "Box(3)")  # type: ignore[arg-type]
    gym_box = gymnasium.spaces.Box(-1.0, 1.0, (3,))
    with pytest.raises(TypeError, match=r"got gymnasium.spaces.box.Box. Convert it with"):
        VecTransformObservation(venv, lambda b: b, gym_box)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["sync", "async", "native"])
def test_transform_reward_leaves_frozen_sub_envs_reward_0_as_each_sub_envs_own_one_does(
    backend: str,
) -> None:
    def penalty(rewards: Any) -> Any:  # a step cost
        return rewards - 0.01

    def build(fns: list[Callable[[], Any]]) -> Any:
        if backend == "native":
            return CounterVecEnv(2, autoreset=False)
        cls = SyncVecEnv if backend == "sync" else sekai.AsyncVecEnv
        return cls(fns, autoreset=False)

    inside = [lambda: sekai.TransformReward(CounterEnv(), penalty)] * 2
    vecs = [VecTransformReward(build([CounterEnv] * 2), penalty)]
    if backend != "native":  # the same transform in every sub-env
        vecs.append(build(inside))
    runs = []
    for vec in vecs:
        vec.reset(options=[{"start": GOAL - 1}, {"start": GOAL - 3}])
        runs.append([vec.step([1, 1]).rewards.tolist() for _ in range(5)])
        vec.close()
    want = [[0.39, 0.39], [0.0, 0.29], [0.0, 0.19], [0.0, 0.0], [0.0, 0.0]]
    np.testing.assert_allclose(runs[0], want)
    assert all(run == runs[0] for run in runs)
    vec = VecTransformReward(build([CounterEnv] * 2), penalty)
    vec.reset(options=[{"start": GOAL - 1}, {"start": GOAL - 3}])
    vec.step([1, 1])
    assert asyncio.run(vec.async_step([1, 1])).rewards.tolist() == pytest.approx([0.0, 0.29])


def test_ppo_stack_repr_and_episode_count() -> None:
    stats = VecRecordEpisodeStatistics(SyncVecEnv([CounterEnv] * 3))
    vec = VecNormalizeReward(VecNormalizeObservation(stats), gamma=0.99)
    assert repr(vec) == (
        "VecNormalizeReward(VecNormalizeObservation(VecRecordEpisodeStatistics("
        "SyncVecEnv(num_envs=3))))"
    )
    vec.reset(options={"start": GOAL - 2})
    for _ in range(2):
        result = vec.step([1, 1, 1])
    assert stats.tracker.summary()["num_episodes"] == 3  # type: ignore[attr-defined]
    assert result.infos[2]["final_observation"].dtype == np.float64


# name -> (build the wrapper, its state after a run)
PARITY: dict[str, tuple[Callable[[sekai.VecEnv], Any], Callable[[Any], Any]]] = {
    "VecRecordEpisodeStatistics": (
        lambda v: VecRecordEpisodeStatistics(v, tracker=Tracker()),
        lambda w: (w.tracker.events, w.episode_returns, w.episode_lengths),
    ),
    "VecNormalizeObservation": (VecNormalizeObservation, lambda w: w.state_dict()),
    "VecNormalizeReward": (lambda v: VecNormalizeReward(v, gamma=0.5), lambda w: w.state_dict()),
    "VecTransformObservation": (lambda v: VecTransformObservation(v, lambda b: -b), repr),
    "VecTransformReward": (lambda v: VecTransformReward(v, lambda r: 2 * r + 1), repr),
}
STARTS = [{"start": GOAL - 1}, {"start": GOAL - 9}]


def _rows(result: Any) -> Any:
    infos = []
    for i in range(2):
        info = dict(info_at(result, i))
        episode = info.pop("episode", None)  # its times differ from run to run
        if episode is not None:
            info["episode"] = (episode.episode_return, episode.episode_length)
        infos.append(info)
    fields = ("observations", "rewards", "terminated", "truncated")
    return [getattr(result, f) for f in fields if hasattr(result, f)] + [infos]


def _parity_run(vec: Any, sync: bool) -> list[Any]:
    """Sub-env 0 finishes at once and stays frozen (no autoreset) until the mid-run reset, which
    cuts sub-env 1's episode short; each sub-env finishes once more after it."""

    async def run() -> list[Any]:
        async def call(name: str, *args: Any, **kwargs: Any) -> Any:
            if sync:
                return getattr(vec, name)(*args, **kwargs)
            return await getattr(vec, "async_" + name)(*args, **kwargs)

        out = [_rows(await call("reset", seed=0, options=STARTS))]
        for k in range(9):
            out.append(_rows(await call("step", [1, 2])))
            if k == 3:
                out.append(_rows(await call("reset", seed=5, options=STARTS)))
        return out

    return asyncio.run(run())


def test_parity_cases_cover_every_builtin_vector_wrapper() -> None:
    assert set(PARITY) == set(vector_wrappers.__all__)


@pytest.mark.parametrize("name", sorted(PARITY))
def test_async_path_matches_the_sync_path_with_frozen_sub_envs_and_a_mid_run_reset(
    name: str,
) -> None:
    build, state = PARITY[name]
    sync_vec = build(SyncVecEnv([CounterEnv] * 2, autoreset=False))
    async_vec = build(SyncVecEnv([CounterEnv] * 2, autoreset=False))
    expected = _parity_run(sync_vec, sync=True)
    got = _parity_run(async_vec, sync=False)
    assert structurally_equal(got, expected)
    assert structurally_equal(state(async_vec), state(sync_vec))


class _Fails(sekai.Env):  # type: ignore[type-arg]
    """Action 0: reward 1; action 1: reward 10 and the episode ends; action 2: raises."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(3)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action == 2:
            raise ValueError("boom")
        return sekai.StepResult(
            np.zeros(1, np.float32), 10.0 if action == 1 else 1.0, action == 1, False, {}
        )


_BACKENDS: dict[str, Callable[[], Any]] = {
    "sync": lambda: SyncVecEnv([_Fails] * 2),
    "async": lambda: sekai.AsyncVecEnv([_Fails] * 2),
    "proc": lambda: sekai.ProcVecEnv([_Fails] * 2, num_workers=1, context="fork"),
}


@pytest.mark.parametrize("backend", list(_BACKENDS))
def test_an_episode_ending_in_a_step_that_raises_elsewhere_does_not_leak_into_the_next(
    backend: str,
) -> None:
    # Sub-env 0 ends its episode (and is reset) in a step where sub-env 1 raises (rule 9).
    tracker = Tracker()
    with VecNormalizeReward(VecRecordEpisodeStatistics(_BACKENDS[backend](), tracker)) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        with pytest.raises(ValueError, match="boom"):
            vec.step([1, 2])
        records = vec.venv
        assert records.episode_returns[0] == 0.0 and records.episode_lengths[0] == 0
        assert vec._returns[0] == 0.0  # VecNormalizeReward's discounted return starts over
        # The episode that ended in the failed call is recorded (1 + 10 over 2 steps), then
        # sub-env 0's new episode begins (its recorded seed kept).
        seed = sekai.make_seed_sequence(0, 2)[0]
        assert tracker.events[-2:] == [("end", 0, 11.0), ("reset", None, seed)]
        vec.step([0, 0])
        stats = vec.step([1, 0]).infos[0]["episode"]
        assert (stats.episode_return, stats.episode_length) == (11.0, 2)  # not 12.0 and 3


@pytest.mark.parametrize("backend", list(_BACKENDS))
def test_a_step_that_raises_elsewhere_still_counts_for_the_sub_envs_that_stepped(
    backend: str,
) -> None:
    tracker = Tracker()
    with VecNormalizeReward(VecRecordEpisodeStatistics(_BACKENDS[backend](), tracker)) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="boom"):
            vec.step([0, 2])  # sub-env 0 steps (reward 1), sub-env 1 raises
        records = vec.venv
        assert records.episode_lengths.tolist() == [1, 0]
        assert records.episode_returns.tolist() == [1.0, 0.0]
        assert vec._returns.tolist() == [1.0, 0.0]
        assert vec.return_rms.count == 1  # one return seen: sub-env 0's
        assert ("step", 1.0) in tracker.events
        stats = vec.step([1, 1]).infos[0]["episode"]
        assert (stats.episode_return, stats.episode_length) == (11.0, 2)


@pytest.mark.parametrize("backend", ["sync", "async"])
def test_a_step_that_raises_does_not_discount_the_return_of_the_sub_env_that_raised(
    backend: str,
) -> None:
    with VecNormalizeReward(_BACKENDS[backend](), gamma=0.5) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])  # the returns: 1, 1
        with pytest.raises(ValueError, match="boom"):
            vec.step([0, 2])  # sub-env 0: 0.5 * 1 + 1 = 1.5; sub-env 1 did not step: still 1
        vec.step([0, 0])  # 0.5 * 1.5 + 1 = 1.75 and 0.5 * 1 + 1 = 1.5
        assert vec.return_rms.count == pytest.approx(5)
        assert vec.return_rms.mean == pytest.approx(np.mean([1.0, 1.0, 1.5, 1.75, 1.5]))


class _Misfits(_Fails):  # type: ignore[misc]
    """As ``_Fails``; action 3 returns an observation, action 4 a reward, that does not fit."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = sekai.Discrete(5)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action == 3:
            return sekai.StepResult(np.zeros(2, np.float32), 1.0, False, False, {})
        if action == 4:
            return sekai.StepResult(np.zeros(1, np.float32), "1.0", False, False, {})
        return super().step(action)


_MISFIT_BACKENDS: dict[str, Callable[[bool], Any]] = {
    "sync": lambda autoreset: SyncVecEnv([_Misfits] * 2, autoreset=autoreset),
    "async": lambda autoreset: sekai.AsyncVecEnv([_Misfits] * 2, autoreset=autoreset),
    "proc": lambda autoreset: sekai.ProcVecEnv(
        [_Misfits] * 2, num_workers=2, context="fork", autoreset=autoreset
    ),
}


@pytest.mark.parametrize(("action", "error"), [(3, ValueError), (4, TypeError)])
@pytest.mark.parametrize("autoreset", [False, True])
@pytest.mark.parametrize("backend", list(_MISFIT_BACKENDS))
def test_a_result_that_does_not_fit_is_its_sub_envs_error_and_the_others_steps_count(
    backend: str, autoreset: bool, action: int, error: type[Exception]
) -> None:
    tracker = Tracker()
    with VecRecordEpisodeStatistics(_MISFIT_BACKENDS[backend](autoreset), tracker) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        with pytest.raises(error, match="Sub-env 1 returned"):
            vec.step([1, action])  # sub-env 0 ends its episode (1 + 10 over 2 steps)
        assert vec.frozen.tolist() == [not autoreset, False]
        assert [e for e in tracker.events if e[0] == "end"] == [("end", 0, 11.0)]
        assert vec.episode_returns.tolist() == [0.0, 1.0]
        assert vec.episode_lengths.tolist() == [0, 1]
        result = vec.step([1, 0])
        if autoreset:  # a new episode of one step, not merged with the one recorded
            stats = result.infos[0]["episode"]
            assert (stats.episode_return, stats.episode_length) == (10.0, 1)
        else:  # frozen: its episode is not recorded a second time
            assert "episode" not in result.infos[0]
            assert [e for e in tracker.events if e[0] == "end"] == [("end", 0, 11.0)]


def test_a_failed_steps_rewards_reach_outer_wrappers_as_the_inner_ones_rewrite_them() -> None:
    inner = sekai.VecTransformReward(SyncVecEnv([_Fails] * 2), lambda r: r * 100)
    with VecRecordEpisodeStatistics(inner) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="boom"):
            vec.step([0, 2])
        assert vec.episode_returns.tolist() == [100.0, 0.0]  # not the base env's raw 1.0


def test_a_failed_steps_record_gives_reward_0_to_the_sub_env_that_did_not_step() -> None:
    # The inner transform would give sub-env 1 a reward of 10; it did not step, so it keeps 0,
    # and the outer transform, which mixes the sub-envs, sees [11, 0] (as after a good step).
    inner = sekai.VecTransformReward(SyncVecEnv([_Fails] * 2), lambda r: r + 10)
    with VecRecordEpisodeStatistics(sekai.VecTransformReward(inner, lambda r: r - r.mean())) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="boom"):
            vec.step([0, 2])
        assert vec.episode_returns.tolist() == [5.5, 0.0]  # 11 - mean([11, 0])
        assert vec.episode_lengths.tolist() == [1, 0]


@pytest.mark.parametrize("backend", ["sync", "async"])
def test_a_failed_steps_reward_is_recorded_as_vec_normalize_reward_scales_it(backend: str) -> None:
    norm = VecNormalizeReward(_BACKENDS[backend]())
    with VecRecordEpisodeStatistics(norm) as vec:
        vec.reset(seed=0)
        handed_out = sum(vec.step([0, 0]).rewards[0] for _ in range(2))
        with pytest.raises(ValueError, match="boom"):
            vec.step([1, 2])  # sub-env 0 ends its episode with reward 10; sub-env 1 raises
        scale = return_scale(norm.return_rms, norm.epsilon)
        assert scale != pytest.approx(1.0)  # the raw reward would be recorded otherwise
        (episode,) = vec.tracker.episodes
        assert episode.episode_length == 3
        assert episode.episode_return == pytest.approx(handed_out + 10.0 / scale)


def test_the_failed_steps_record_is_only_for_the_error_it_raised() -> None:
    vec = SyncVecEnv([_Fails] * 2)
    vec.reset(seed=0)
    with pytest.raises(ValueError) as caught:
        vec.step([1, 2])
    partial = vec._partial_step(caught.value)
    assert partial is not None
    assert partial.stepped.tolist() == [True, False] and partial.ended.tolist() == [True, False]
    assert partial.rewards.tolist() == [10.0, 0.0]
    assert vec._partial_step(ValueError("another")) is None


class IndexedTracker(Tracker):
    def on_reset(self, env_id: Any, seed: Any, *, env_index: int) -> None:
        self.events.append(("reset", env_index, seed))

    def on_step(
        self, reward: Any, terminated: Any, truncated: Any, info: Any, env_index: int = -1
    ) -> None:
        self.events.append(("step", env_index, reward))


def test_a_tracker_that_takes_env_index_is_told_the_sub_env_of_each_event() -> None:
    tracker = IndexedTracker()
    vec = VecRecordEpisodeStatistics(SyncVecEnv([_Fails] * 2), tracker)
    vec.reset(seed=[7, 8])
    vec.step([0, 1])
    assert tracker.events == [
        ("reset", 0, 7),
        ("reset", 1, 8),
        ("step", 0, 1.0),
        ("step", 1, 10.0),
        ("end", 1, 10.0),
        ("reset", 1, 8),
    ]


class Forwarding(Tracker):
    """Passes its hooks on with **kwargs (to trackers that take no env_index)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = Tracker()

    def on_reset(self, *args: Any, **kwargs: Any) -> None:
        self.inner.on_reset(*args, **kwargs)

    def on_step(self, *args: Any, **kwargs: Any) -> None:
        self.inner.on_step(*args, **kwargs)


def test_a_tracker_whose_hooks_take_only_kwargs_is_not_given_env_index() -> None:
    tracker = Forwarding()
    vec = VecRecordEpisodeStatistics(SyncVecEnv([_Fails] * 2), tracker)
    vec.reset(seed=0)
    vec.step([0, 1])
    assert [event[0] for event in tracker.inner.events] == [
        "reset",
        "reset",
        "step",
        "step",
        "reset",
    ]


def test_the_wrapper_is_generic_in_its_tracker_type() -> None:
    # Type checkers see vec.tracker as the tracker passed (InMemoryTracker by default).
    tracker = Tracker()
    vec = VecRecordEpisodeStatistics[Tracker](SyncVecEnv([_Fails] * 2), tracker=tracker)
    assert vec.tracker is tracker
    default = VecRecordEpisodeStatistics[InMemoryTracker](SyncVecEnv([_Fails] * 2))
    assert isinstance(default.tracker, InMemoryTracker)


def test_a_tracker_assigned_after_construction_gets_every_hook() -> None:
    # A tracker of another type than the one given at construction (typed code says so with
    # VecRecordEpisodeStatistics[StatsTracker]).
    vec = VecRecordEpisodeStatistics(SyncVecEnv([_Fails] * 2))
    vec.tracker = tracker = Tracker()
    vec.reset(seed=0)
    vec.step([0, 1])
    kinds = [event[0] for event in tracker.events]
    assert kinds == ["reset", "reset", "step", "step", "end", "reset"]
    with pytest.raises(TypeError, match="tracker must be a StatsTracker"):
        vec.tracker = object()  # type: ignore[assignment]


def test_a_terminal_observation_from_below_an_observation_wrapper_is_named_before_any_update() -> (
    None
):
    # AutoReset inside FlattenObservation: final_observation stays a dict of the inner space
    from sekai.testing.envs import LineEnv
    from sekai.wrappers import AutoReset, TransformObservation

    def make() -> sekai.Env:  # type: ignore[type-arg]
        inner = AutoReset(LineEnv(size=2))
        return TransformObservation(
            inner, lambda obs: {"x": obs}, sekai.Dict(x=inner.observation_space)
        )

    vec = sekai.VecNormalizeObservation(SyncVecEnv([make] * 2))
    vec.reset(seed=0)
    count = vec.obs_rms["x"].count
    with pytest.raises(TypeError, match=r"final_observation'\] does not fit .*put AutoReset"):
        vec.step([1, 1])
    assert vec.obs_rms["x"].count == count


class _FailsOrNaN(_Fails):
    """_Fails, and action 3: a NaN reward."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = sekai.Discrete(4)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action == 3:
            return sekai.StepResult(np.zeros(1, np.float32), float("nan"), False, False, {})
        return super().step(action)


def test_a_non_finite_reward_in_a_step_that_raises_elsewhere_leaves_the_error_and_stats() -> None:
    # The failed step's own error propagates; the NaN return is kept out of the statistics,
    # and the next step that updates them names it.
    with VecNormalizeReward(SyncVecEnv([_FailsOrNaN] * 2)) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="boom"):
            vec.step([3, 2])  # sub-env 0: NaN reward; sub-env 1 raises
        assert vec.return_rms.count == 1e-4
        with pytest.raises(
            ValueError,
            match=r"^VecNormalizeReward: sub-env 0's discounted return is nan \(this step's "
            r"reward is 1\.0\)\. ",
        ):
            vec.step([0, 0])
        assert vec.return_rms.count == 1e-4
