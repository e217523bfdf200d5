"""Vector wrappers over a native env's lazily built infos: bit for bit the infos, observations
and statistics that the same wrappers give over infos built up front, without building them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

import sekai
from sekai._equal import without_wall_clock
from sekai.spaces import Box, Dict, Discrete, Space
from sekai.stats import EpisodeStats
from sekai.vector import (
    NativeVecEnv,
    SyncVecEnv,
    VecEnv,
    VecNormalizeObservation,
    VecRecordEpisodeStatistics,
    VecStepResult,
    VecTransformObservation,
)
from sekai.vector.infos import ArrayInfos
from sekai.vector.result import info_at
from sekai.vector.vec_wrapper import VecResultWrapper

F32 = np.finfo(np.float32)
# What a terminal observation may hold: values that update no statistics, so non-finite ones
# are allowed there, and those whose bits a careless computation changes.
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, F32.max, -F32.max, F32.smallest_subnormal, 0.1]

SPACES: dict[str, Space[Any]] = {
    "box": Box(-np.inf, np.inf, shape=(3,), dtype=np.float32),
    "scalar": Box(-np.inf, np.inf, shape=(), dtype=np.float32),
    "dict": Dict(pos=Box(-np.inf, np.inf, shape=(3,), dtype=np.float32), n=Discrete(5)),
}


class Spiky(NativeVecEnv):
    """Sub-envs end at random steps (terminated, or truncated after 7 steps); with ``special``
    a terminal observation carries NaN, infinities, +-0 and the float32 extremes. Infos hold
    1-D, 2-D, datetime and non-split values; reset infos two keys."""

    def __init__(self, num_envs: int, kind: str, *, autoreset: bool = True) -> None:
        super().__init__(
            num_envs, SPACES[kind], Discrete(2), autoreset=autoreset, max_episode_steps=7
        )
        self.kind = kind
        self.special = autoreset  # without autoreset a terminal observation updates statistics
        self.x = np.zeros((num_envs, 3))
        self.k = np.zeros(num_envs, dtype=np.int64)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        self.x[indices] = self.rng.normal(size=(len(indices), 3))
        self.k[indices] = 0

    def _reset_infos(self, indices: NDArray[np.intp]) -> dict[str, Any]:
        return {"start": self.x[indices, 0].copy(), "rows": np.stack([indices, indices], 1)}

    def _observe(self) -> Any:
        x = self.x.astype(np.float32)
        if self.kind == "scalar":
            return x[:, 0].copy()
        if self.kind == "dict":
            return {"pos": x, "n": self.k % 5}
        return x

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        n = self.num_envs
        self.k += 1
        self.x += self.rng.normal(size=(n, 3)) + np.asarray(actions)[:, None]
        terminated = self.rng.random(n) < 0.25
        if self.special:
            ending = np.flatnonzero(terminated | (self.k >= 7))
            self.x[ending] = self.rng.choice(SPECIAL, size=(len(ending), 3))
        infos = {
            "a": self.k.copy(),
            "b": self.x[:, :2].copy(),
            "day": np.datetime64("2024-01-01") + self.k.astype("timedelta64[D]"),
            "same": "for all",
        }
        return 0.5 * self.k, terminated, np.zeros(n, dtype=bool), infos


class Built(VecResultWrapper):
    """Builds every info list as soon as the env hands it out: the wrappers above it take the
    path of infos built up front (the reference)."""

    def _rewrite_reset(self, result: Any) -> Any:
        result.infos  # noqa: B018 (built on first read)
        return result

    def _rewrite_step(self, result: VecStepResult[Any], live: Any) -> VecStepResult[Any]:
        result.infos  # noqa: B018
        return result


class Tagger(VecResultWrapper):
    """A wrapper that reads the whole info of each sub-env that ended and adds a key to it."""

    def _rewrite_step(self, result: VecStepResult[Any], live: Any) -> VecStepResult[Any]:
        for i in np.flatnonzero(result.dones).tolist():
            info = info_at(result, i)
            info["tag"] = list(info)
        return result


class OnStep:
    """A tracker with an ``on_step``: the wrapper hands it every info dict (built)."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_reset(self, env_id: Any, seed: Any) -> None:
        pass

    def on_step(self, reward: Any, terminated: Any, truncated: Any, info: Any) -> None:
        self.seen.append(sorted(info))

    def on_episode_end(self, stats: Any) -> None:
        self.seen.append(stats.episode_return)

    def summary(self) -> dict[str, Any]:
        return {}


def _bits(value: Any) -> Any:
    """``value`` as a comparable record of its exact contents: types, dtypes, shapes, bytes (so
    NaN equals NaN and -0.0 differs from 0.0), dict key order; an EpisodeStats without its
    wall-clock times."""
    if isinstance(value, EpisodeStats):
        return ("EpisodeStats", _bits(dataclasses.asdict(without_wall_clock(value))))
    if isinstance(value, dict):
        return (type(value), tuple((key, _bits(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_bits(item) for item in value))
    if isinstance(value, (np.ndarray, np.generic)):
        return (type(value), value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, float):
        return (float, value.hex())
    return (type(value), value)


def _outcome(result: Any) -> Any:
    fields = ("observations", "rewards", "terminated", "truncated", "infos")
    return _bits([getattr(result, name) for name in fields if hasattr(result, name)])


def _run(vec: VecEnv, steps: int, seed: int = 3) -> list[Any]:
    """Every result of a reset and ``steps`` steps (error type and message for a step that
    raises), read in full after the step."""
    space = vec.batch_action_space
    space.seed(seed)
    out = [_outcome(vec.reset(seed=seed))]
    for _ in range(steps):
        try:
            out.append(_outcome(vec.step(space.sample())))
        except ValueError as error:
            out.append((type(error), str(error)))
            vec.reset()
    return out


def _state(vec: Any) -> Any:
    """What the wrappers of ``vec`` keep: statistics and recorded episodes."""
    state = []
    while isinstance(vec, sekai.VecWrapper):
        if isinstance(vec, VecNormalizeObservation):
            state.append(_bits(vec.state_dict()))
        if isinstance(vec, VecRecordEpisodeStatistics):
            tracker: Any = vec.tracker
            episodes = tracker.seen if isinstance(tracker, OnStep) else list(tracker.episodes)
            state.append(_bits([vec.episode_returns, vec.episode_lengths, episodes]))
        vec = vec.venv
    return state


Stack = Callable[[VecEnv], VecEnv]
STACKS: dict[str, Stack] = {
    "stats": VecRecordEpisodeStatistics,
    "stats with on_step": lambda v: VecRecordEpisodeStatistics(v, tracker=OnStep()),
    "normalize": VecNormalizeObservation,
    "normalize clipped, ewm": lambda v: VecNormalizeObservation(v, clip=0.5, stats="ewm"),
    "normalize over stats": lambda v: VecNormalizeObservation(VecRecordEpisodeStatistics(v)),
    "stats over normalize": lambda v: VecRecordEpisodeStatistics(VecNormalizeObservation(v)),
    "transform over normalize": lambda v: VecTransformObservation(
        VecNormalizeObservation(v), lambda b: b
    ),
    "normalize over a reader over stats": lambda v: VecNormalizeObservation(
        Tagger(VecRecordEpisodeStatistics(v))
    ),
}


@pytest.mark.parametrize("autoreset", [True, False])
@pytest.mark.parametrize("kind", sorted(SPACES))
@pytest.mark.parametrize("stack", sorted(STACKS))
def test_wrappers_over_lazy_infos_give_what_they_give_over_built_ones(
    stack: str, kind: str, autoreset: bool
) -> None:
    build = STACKS[stack]
    lazy = build(Spiky(16, kind, autoreset=autoreset))
    eager = build(Built(Spiky(16, kind, autoreset=autoreset)))
    assert _run(lazy, 60) == _run(eager, 60)
    assert _state(lazy) == _state(eager)


def test_a_non_finite_observation_is_refused_the_same_way_over_lazy_infos() -> None:
    def nan_at_step_3(vec: Spiky) -> Spiky:
        step = vec._step

        def stepped(actions: Any) -> Any:
            out = step(actions)
            if vec.k[0] == 3:
                vec.x[0, 1] = np.nan  # a sub-env that goes on: its observation updates stats
            return out

        vec._step = stepped  # type: ignore[method-assign]
        return vec

    lazy = VecNormalizeObservation(VecRecordEpisodeStatistics(nan_at_step_3(Spiky(8, "box"))))
    eager = VecNormalizeObservation(
        VecRecordEpisodeStatistics(Built(nan_at_step_3(Spiky(8, "box"))))
    )
    got = _run(lazy, 20)
    assert any(isinstance(entry, tuple) and entry[0] is ValueError for entry in got)
    assert got == _run(eager, 20)


def test_wrappers_add_their_keys_without_building_the_infos(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[int] = []
    make_one = ArrayInfos._make_one

    def counted(self: ArrayInfos, index: int) -> dict[str, Any]:
        built.append(index)
        return make_one(self, index)

    monkeypatch.setattr(ArrayInfos, "_make_one", counted)
    vec = VecTransformObservation(
        VecRecordEpisodeStatistics(VecNormalizeObservation(Spiky(32, "box"))), lambda b: b
    )
    vec.reset(seed=0)
    ended = 0
    for _ in range(10):
        result = vec.step(np.ones(32, dtype=np.int64))
        ended += int(result.dones.sum())
    assert ended > 0
    assert built == []  # no sub-env's dict was built to add "episode" or a final_observation
    infos = result.infos
    finished = np.flatnonzero(result.dones).tolist()
    assert all(
        list(infos[i])[-4:] == ["final_observation", "final_info", "reset_info", "episode"]
        for i in finished
    )


def _normalized(rms: Any, observation: Any, epsilon: float, clip: float | None) -> Any:
    """The reference: one terminal observation normalised on its own with frozen statistics."""
    if isinstance(observation, dict):
        return {
            "pos": _normalized(rms["pos"], observation["pos"], epsilon, clip),
            "n": observation["n"],
        }
    out = (np.asarray(observation, dtype=np.float64) - rms.mean) / np.sqrt(rms.var + epsilon)
    return out if clip is None else np.clip(out, -clip, clip)


@pytest.mark.parametrize("clip", [None, 0.5])
@pytest.mark.parametrize("kind", sorted(SPACES))
def test_terminal_observations_are_normalised_as_each_alone_with_the_steps_statistics(
    kind: str, clip: float | None
) -> None:
    raw = Spiky(16, kind)
    vec = VecNormalizeObservation(Spiky(16, kind), clip=clip)
    space = vec.batch_action_space
    space.seed(0)
    raw.reset(seed=1)
    vec.reset(seed=1)
    checked = 0
    for _ in range(40):
        actions = space.sample()
        expected = raw.step(actions)
        result = vec.step(actions)
        for i in np.flatnonzero(expected.dones).tolist():
            final = expected.infos[i]["final_observation"]
            want = _normalized(vec.obs_rms, final, vec.epsilon, clip)
            assert _bits(result.infos[i]["final_observation"]) == _bits(want)
            checked += 1
    assert checked > 50


class Float64Ending(sekai.Env):  # type: ignore[type-arg]
    """A float32 space whose env ends every other step on a float64 observation (which its
    dtype kind lets through) holding values float32 cannot: each is normalised as it is."""

    def __init__(self) -> None:
        self.observation_space = Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.action_space = Discrete(2)
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.array([self.t, 1.0], dtype=np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        done = self.t % 2 == 0
        obs = np.array([0.1 * self.t, 1 / 3], dtype=np.float64 if done else np.float32)
        return sekai.StepResult(obs, 1.0, done, False, {})


def test_a_terminal_observation_of_another_float_dtype_is_normalised_as_it_is() -> None:
    vec = VecNormalizeObservation(SyncVecEnv([Float64Ending] * 3))
    vec.reset(seed=0)
    for _ in range(6):
        result = vec.step([0, 1, 0])
        for i in np.flatnonzero(result.dones).tolist():
            final = np.array([0.1 * vec.venv.get_attr("t")[i], 1 / 3])
            want = _normalized(vec.obs_rms, final, vec.epsilon, None)
            assert _bits(result.infos[i]["final_observation"]) == _bits(want)


def _frozen_normalizations(vec: VecNormalizeObservation, steps: int) -> tuple[int, int]:
    """How many sub-envs ended in ``steps`` steps, and how many calls normalised with frozen
    statistics (the terminal observations') meanwhile."""
    calls: list[bool] = []
    normalize = vec._normalizer.normalize

    def counted(obs: Any, **options: Any) -> Any:
        calls.append(options["update"])
        return normalize(obs, **options)

    vec._normalizer.normalize = counted  # type: ignore[method-assign]
    vec.reset(seed=0)
    ended = 0
    for _ in range(steps):
        ended += int(vec.step(np.zeros(vec.num_envs, dtype=np.int64)).dones.sum())
    return ended, calls.count(False)


def test_terminal_observations_are_normalised_in_one_call_unless_a_subclass_says_how() -> None:
    class PerRow(VecNormalizeObservation):
        def final_observation(self, observation: Any) -> Any:
            rows.append(observation)
            return super().final_observation(observation)

    rows: list[Any] = []
    ended, frozen = _frozen_normalizations(VecNormalizeObservation(Spiky(32, "box")), 5)
    assert 0 < frozen <= 5 < ended  # at most one call per step
    ended, frozen = _frozen_normalizations(PerRow(Spiky(32, "box")), 5)
    assert len(rows) == frozen == ended  # the subclass's own hook, for each
