"""to_gymnasium_vector / from_gymnasium_vector: gymnasium's vector contract, both directions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space

import sekai
from sekai.compat import (
    GymnasiumVectorToSekai,
    SekaiToGymnasiumVector,
    from_gymnasium,
    from_gymnasium_vector,
    to_gymnasium,
    to_gymnasium_vector,
)
from sekai.vector._conformance import (
    CounterEnv,
    CounterVecEnv,
    assert_same_trajectory,
    record_trajectory,
)


def gym_sync(make_env: Any, n: int, mode: AutoresetMode) -> SyncVectorEnv:
    return SyncVectorEnv([make_env for _ in range(n)], autoreset_mode=mode)


def assert_vector_infos(infos: dict[str, Any], n: int) -> None:
    """gymnasium's layout: every key ``k`` has a bool mask ``_k`` of shape (n,), recursively."""
    assert isinstance(infos, dict)
    for key, value in infos.items():
        if key.startswith("_"):
            assert key[1:] in infos, f"mask {key} without its key"
            assert value.dtype == np.bool_ and value.shape == (n,)
            continue
        assert f"_{key}" in infos, f"{key} has no mask"
        if isinstance(value, dict):
            assert_vector_infos(value, n)
        else:
            assert isinstance(value, np.ndarray) and len(value) == n


def check_gymnasium_vector_contract(venv: gym.vector.VectorEnv, steps: int = 60) -> int:
    """gymnasium's documented VectorEnv contract in same-step mode; returns episodes seen."""
    n = venv.num_envs
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.observation_space == batch_space(venv.single_observation_space, n)
    assert venv.action_space == batch_space(venv.single_action_space, n)
    obs, infos = venv.reset(seed=list(range(n)))
    assert obs in venv.observation_space
    assert_vector_infos(infos, n)
    venv.action_space.seed(0)
    episodes = 0
    for _ in range(steps):
        obs, rewards, terminations, truncations, infos = venv.step(venv.action_space.sample())
        assert obs in venv.observation_space
        assert isinstance(rewards, np.ndarray) and rewards.shape == (n,)
        assert rewards.dtype == np.float64
        for flags in (terminations, truncations):
            assert isinstance(flags, np.ndarray) and flags.shape == (n,) and flags.dtype == np.bool_
        assert_vector_infos(infos, n)
        dones = terminations | truncations
        if dones.any():
            np.testing.assert_array_equal(infos["_final_obs"], dones)
            np.testing.assert_array_equal(infos["_final_info"], dones)
            for i in np.flatnonzero(dones):
                assert infos["final_obs"][i] in venv.single_observation_space
            episodes += int(dones.sum())
        else:
            assert "final_obs" not in infos
    return episodes


# -- to_gymnasium_vector ------------------------------------------------------------------


@pytest.mark.parametrize(
    "make_vec",
    [
        lambda: sekai.make_vec("CartPole-v1", 4, vectorization_mode="sync", max_episode_steps=15),
        lambda: sekai.make_vec("classic/CartPole-v1", 4, max_episode_steps=15),
        lambda: sekai.make_vec("Portfolio-v0", 3, episode_length=10),
        lambda: sekai.make_vec("Trading-v0", 3, vectorization_mode="async", episode_length=10),
    ],
    ids=["sync", "native", "native-dict", "async"],
)
def test_to_gymnasium_vector_follows_gymnasiums_vector_contract(make_vec: Any) -> None:
    venv = to_gymnasium_vector(make_vec())
    assert isinstance(venv, gym.vector.VectorEnv)
    assert check_gymnasium_vector_contract(venv) > 0
    venv.close()
    assert venv.closed and venv.sekai_vec.closed


def test_to_gymnasium_vector_equals_gymnasium_same_step_sync_vector_env() -> None:
    n = 4
    ours = to_gymnasium_vector(
        sekai.make_vec("CartPole-v1", n, vectorization_mode="sync", max_episode_steps=20)
    )
    theirs = gym_sync(
        lambda: to_gymnasium(sekai.make("CartPole-v1", max_episode_steps=20)),
        n,
        AutoresetMode.SAME_STEP,
    )
    seeds = [3, 1, 4, 1]
    a, b = ours.reset(seed=seeds), theirs.reset(seed=seeds)
    np.testing.assert_array_equal(a[0], b[0])
    actions = np.random.default_rng(1).integers(0, 2, size=(80, n))
    finished = 0
    for batch in actions:
        a, b = ours.step(batch), theirs.step(batch)
        for x, y in zip(a[:4], b[:4]):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)
        assert list(a[4]) == list(b[4])
        for key in a[4]:
            if key == "final_obs":
                for i in np.flatnonzero(b[4]["_final_obs"]):
                    np.testing.assert_array_equal(a[4][key][i], b[4][key][i])
            elif key == "final_info":
                assert list(a[4][key]) == list(b[4][key])
                np.testing.assert_array_equal(
                    a[4][key]["elapsed_steps"], b[4][key]["elapsed_steps"]
                )
            else:
                np.testing.assert_array_equal(a[4][key], b[4][key])
        finished += int(b[4].get("_final_obs", np.zeros(n, bool)).sum())
    assert finished > n


def test_gymnasium_vector_record_episode_statistics_works_on_it() -> None:
    n = 3

    def run(venv: gym.vector.VectorEnv) -> list[float]:
        venv = gym.wrappers.vector.RecordEpisodeStatistics(venv)
        venv.reset(seed=[0, 1, 2])
        returns: list[float] = []
        for _ in range(60):
            *_, infos = venv.step(np.ones(n, dtype=np.int64))
            if "episode" in infos:
                returns += infos["episode"]["r"][infos["_episode"]].tolist()
        return returns

    ours = run(to_gymnasium_vector(sekai.make_vec("CartPole-v1", n, vectorization_mode="sync")))
    theirs = run(
        gym_sync(lambda: to_gymnasium(sekai.make("CartPole-v1")), n, AutoresetMode.SAME_STEP)
    )
    assert ours == theirs and len(ours) > n


def test_to_gymnasium_vector_keeps_keys_added_by_sekai_vector_wrappers() -> None:
    vec = sekai.VecRecordEpisodeStatistics(CounterVecEnv(2))
    venv = to_gymnasium_vector(vec)
    venv.reset()
    for _ in range(10):
        *_, infos = venv.step(np.full(2, 2))
        if "final_obs" in infos:
            break
    assert "episode" in infos and infos["_episode"].all()
    assert infos["final_info"]["position"].tolist() == [16, 16]
    assert infos["start"].tolist() == [3, 3]  # the reset info of the next episode
    assert infos["episode"]["l"].tolist() == [8, 8]


def test_to_gymnasium_vector_gives_episode_statistics_as_gymnasium_does() -> None:
    """gymnasium-style code reads ``infos["episode"]["r"][infos["_episode"]]``: sekai's
    EpisodeStats become the arrays gymnasium's vector RecordEpisodeStatistics gives."""
    ours = to_gymnasium_vector(sekai.VecRecordEpisodeStatistics(CounterVecEnv(3)))
    theirs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym_sync(lambda: to_gymnasium(CounterEnv()), 3, AutoresetMode.SAME_STEP)
    )
    ours.reset(seed=0)
    theirs.reset(seed=0)
    actions = np.array([2, 1, 2])
    episodes = 0
    for _ in range(20):
        *_, mine = ours.step(actions)
        *_, expected = theirs.step(actions)
        assert ("episode" in mine) == ("episode" in expected)
        if "episode" not in mine:
            continue
        np.testing.assert_array_equal(mine["_episode"], expected["_episode"])
        done = mine["_episode"]
        episodes += int(done.sum())
        for key in ("r", "l"):
            np.testing.assert_array_equal(
                mine["episode"][key][done], expected["episode"][key][done]
            )
        for key, dtype in (("r", np.float64), ("l", np.int64), ("t", np.float64)):
            assert mine["episode"][key].dtype == dtype
    assert episodes > 3


def test_to_gymnasium_vector_gives_sub_envs_episode_statistics_as_gymnasium_does() -> None:
    """A sub-env's own RecordEpisodeStatistics: its EpisodeStats end up in ``final_info``."""
    vec = sekai.SyncVecEnv([lambda: sekai.RecordEpisodeStatistics(CounterEnv())] * 2)
    venv = to_gymnasium_vector(vec)
    venv.reset(seed=0)
    for _ in range(10):
        *_, infos = venv.step(np.full(2, 2))
        if "final_obs" in infos:
            break
    episode = infos["final_info"]["episode"]
    assert infos["final_info"]["_episode"].all()
    assert episode["l"].tolist() == [8, 8] and episode["r"].dtype == np.float64


def test_to_gymnasium_vector_spaces_and_metadata() -> None:
    venv = to_gymnasium_vector(sekai.make_vec("Portfolio-v0", 2))
    assert list(venv.single_observation_space.spaces) == ["returns", "weights"]
    assert venv.observation_space["weights"].shape == (2, 6)
    assert venv.metadata == {"render_fps": 10, "autoreset_mode": AutoresetMode.SAME_STEP}
    assert venv.render_mode is None and venv.render() is None
    assert isinstance(venv, SekaiToGymnasiumVector)
    assert repr(venv) == "SekaiToGymnasiumVector(PortfolioVecEnv(num_envs=2))"


def test_to_gymnasium_vector_reaches_sub_env_attributes() -> None:
    vec = sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    venv = to_gymnasium_vector(vec)
    assert venv.get_attr("x_threshold") == (2.4, 2.4)
    venv.set_attr("x_threshold", [1.0, 2.0])
    assert vec.get_attr("x_threshold") == [1.0, 2.0]
    venv.set_attr("x_threshold", (0.5, 1.5))  # a tuple is per sub-env too (gymnasium's rule)
    assert vec.get_attr("x_threshold") == [0.5, 1.5]
    venv.set_attr("x_threshold", 3.0)
    assert venv.call("get_attr", "x_threshold") == (3.0, 3.0)


@pytest.mark.parametrize("values", [[9.0, 10.0], (4.0, 5.0), [1.0, 2.0, 3.0, 4.0], []])
def test_to_gymnasium_vector_set_attr_refuses_a_list_of_the_wrong_length_as_gymnasium_does(
    values: Any,
) -> None:
    gym_venv = gym_sync(lambda: gym.make("CartPole-v1"), 3, AutoresetMode.SAME_STEP)
    with pytest.raises(ValueError, match="length equal to the number of environments"):
        gym_venv.set_attr("gravity", values)
    vec = sekai.make_vec("CartPole-v1", 3, vectorization_mode="sync")
    venv = to_gymnasium_vector(vec)
    given = f"a {type(values).__name__} of {len(values)} values"
    message = rf"set_attr\('gravity', values\) got {given} for 3 sub-envs.*\[value\] \* 3"
    with pytest.raises(ValueError, match=message):
        venv.set_attr("gravity", values)
    assert vec.get_attr("gravity") == [9.8, 9.8, 9.8]  # nothing was set
    venv.set_attr("gravity", [[1.0]] * 3)  # the same list for every sub-env
    assert vec.get_attr("gravity") == [[1.0], [1.0], [1.0]]


def test_to_gymnasium_vector_passes_one_value_to_a_native_set_attr() -> None:
    vec = CounterVecEnv(2, max_episode_steps=9)
    to_gymnasium_vector(vec).set_attr("max_episode_steps", 5)
    assert vec.max_episode_steps == 5


class Slots(sekai.Env[Any, Any]):
    """A MaskedBox action, checked against the space."""

    observation_space = sekai.Box(0.0, 3.0, shape=(1,))
    action_space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32))

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if action not in self.action_space:
            raise sekai.InvalidAction(action, self.action_space)
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False)


def test_to_gymnasium_vector_gives_sub_envs_masked_box_actions_sampled_from_its_space() -> None:
    venv = to_gymnasium_vector(sekai.SyncVecEnv([Slots, Slots]))
    venv.reset(seed=0)
    venv.action_space.seed(0)
    for _ in range(10):  # the empty slots of gymnasium's samples hold any values
        venv.step(venv.action_space.sample())
    venv.close()


def test_to_gymnasium_vector_rejects_a_vec_env_without_autoreset() -> None:
    vec = CounterVecEnv(2, autoreset=False)
    with pytest.raises(ValueError, match="autoreset=True"):
        to_gymnasium_vector(vec)


def test_to_gymnasium_vector_rejects_a_single_env() -> None:
    with pytest.raises(TypeError, match="to_gymnasium\\(\\)"):
        to_gymnasium_vector(sekai.make("CartPole-v1"))  # type: ignore[arg-type]


# -- from_gymnasium_vector ----------------------------------------------------------------


def counter_trajectory(vec: sekai.VecEnv, **kwargs: Any) -> Any:
    try:
        return record_trajectory(vec, steps=40, **kwargs)
    finally:
        vec.close()


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_from_gymnasium_vector_matches_sekai_sync_vec_env(mode: AutoresetMode) -> None:
    expected = counter_trajectory(sekai.SyncVecEnv([CounterEnv] * 3))
    venv = gym_sync(lambda: to_gymnasium(CounterEnv()), 3, mode)
    actual = counter_trajectory(from_gymnasium_vector(venv))
    assert_same_trajectory(expected, actual)


def test_from_gymnasium_vector_disabled_mode_freezes_like_sekai_without_autoreset() -> None:
    expected = counter_trajectory(sekai.SyncVecEnv([CounterEnv] * 3, autoreset=False))
    venv = gym_sync(lambda: to_gymnasium(CounterEnv()), 3, AutoresetMode.DISABLED)
    sekai_vec = from_gymnasium_vector(venv, autoreset=False)
    actual = counter_trajectory(sekai_vec)
    assert_same_trajectory(expected, actual)


def gym_vector_without_copies(kind: str, n: int) -> gym.vector.VectorEnv[Any, Any, Any]:
    """A DISABLED venv that reuses its observation buffer (copy=False)."""
    fns = [lambda: to_gymnasium(CounterEnv()) for _ in range(n)]
    if kind == "sync":
        return SyncVectorEnv(fns, copy=False, autoreset_mode=AutoresetMode.DISABLED)
    return AsyncVectorEnv(
        fns, copy=False, shared_memory=True, autoreset_mode=AutoresetMode.DISABLED
    )


@pytest.mark.parametrize("autoreset", [True, False], ids=["autoreset", "frozen"])
@pytest.mark.parametrize("kind", ["sync", "async-shared-memory"])
def test_a_venv_without_copies_keeps_the_final_observations(kind: str, autoreset: bool) -> None:
    # The venv overwrites the arrays it returned when finished sub-envs are reset: compare
    # each result with sekai's before the next call.
    expected_vec = sekai.SyncVecEnv([CounterEnv] * 3, autoreset=autoreset)
    vec = from_gymnasium_vector(gym_vector_without_copies(kind, 3), autoreset=autoreset)
    actions = np.random.default_rng(0)
    try:
        assert_same_trajectory(
            [("reset", expected_vec.reset(options={"start": 12}))],
            [("reset", vec.reset(options={"start": 12}))],
        )
        finals = 0
        for _ in range(12):
            batch = actions.integers(0, 3, size=3)
            expected, actual = expected_vec.step(batch), vec.step(batch)
            assert_same_trajectory([("step", expected)], [("step", actual)])
            finals += sum("final_observation" in info for info in actual.infos)
        assert finals > 0 if autoreset else vec.frozen.any()
    finally:
        vec.close()


def test_frozen_sub_envs_are_unfrozen_by_reset() -> None:
    venv = gym_sync(lambda: to_gymnasium(CounterEnv()), 2, AutoresetMode.DISABLED)
    vec = from_gymnasium_vector(venv, autoreset=False)
    vec.reset(options={"start": 14})
    result = vec.step(np.array([1, 0]))
    assert result.dones.tolist() == [True, False]
    assert vec.frozen.tolist() == [True, False]
    later = vec.step(np.array([2, 1]))
    assert later.rewards[0] == 0.0 and later.infos[0] == {} and later.dones.tolist() == [True, True]
    np.testing.assert_array_equal(later.observations[0], result.observations[0])
    vec.reset(options={"start": 0})
    assert not vec.frozen.any()
    assert vec.step(np.array([1, 1])).observations[:, 0].tolist() == [1.0, 1.0]


def test_a_step_with_frozen_sub_envs_leaves_the_callers_action_array_as_it_was() -> None:
    # The frozen sub-env is given its last action again, in a copy: the caller may reuse its
    # array.
    venv = gym_sync(lambda: to_gymnasium(CounterEnv()), 2, AutoresetMode.DISABLED)
    vec = from_gymnasium_vector(venv, autoreset=False)
    vec.reset(options={"start": 14})
    vec.step(np.array([1, 0]))
    assert vec.frozen.tolist() == [True, False]
    actions = np.array([2, 1])
    vec.step(actions)
    assert actions.tolist() == [2, 1]


def test_round_trip_through_both_vector_bridges_keeps_the_trajectory() -> None:
    expected = counter_trajectory(CounterVecEnv(3, max_episode_steps=6))
    actual = counter_trajectory(
        from_gymnasium_vector(to_gymnasium_vector(CounterVecEnv(3, max_episode_steps=6)))
    )
    assert_same_trajectory(expected, actual)


def test_from_gymnasium_vector_seeds_by_sekais_rules() -> None:
    def make() -> gym.Env[Any, Any]:
        return gym.make("CartPole-v1")

    ours = from_gymnasium_vector(gym_sync(make, 3, AutoresetMode.SAME_STEP))
    reference = sekai.SyncVecEnv([lambda: from_gymnasium(make()) for _ in range(3)])
    np.testing.assert_array_equal(
        ours.reset(seed=0).observations, reference.reset(seed=0).observations
    )
    np.testing.assert_array_equal(
        ours.reset(seed=[5, None, 6]).observations[[0, 2]],
        reference.reset(seed=[5, None, 6]).observations[[0, 2]],
    )
    with pytest.raises(TypeError):
        ours.reset(seed=np.random.default_rng(0))


def test_from_gymnasium_vector_passes_one_options_dict() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(venv)
    result = vec.reset(seed=0, options={"low": 0.03, "high": 0.03})
    np.testing.assert_allclose(result.observations, 0.03)
    with pytest.raises(ValueError, match="one options dict"):
        vec.reset(options=[{"low": 0.0}, {"low": 0.1}])


class InfoReporter(gym.Env[Any, Any]):
    """Reports ``info`` at reset (a different one per sub-env when given a list)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, info: dict[Any, Any]) -> None:
        self.info = info

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[Any, dict[Any, Any]]:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), dict(self.info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[Any, Any]]:
        return np.zeros(1, np.float32), 0.0, False, False, {}


class NumberedEpisodes(gym.Env[Any, Any]):
    """Episodes of 2 steps; from episode ``numbered_from`` on, the reset info has an
    "episode_id"."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, numbered_from: int = 2) -> None:
        self.numbered_from = numbered_from
        self.episodes = 0
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.episodes += 1
        self.t = 0
        info = {"episode_id": self.episodes} if self.episodes >= self.numbered_from else {}
        return np.zeros(1, np.float32), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return np.full(1, self.t / 2, np.float32), 1.0, self.t >= 2, False, {"t": self.t}


@pytest.mark.parametrize("venv_class", [SyncVectorEnv, AsyncVectorEnv])
def test_same_step_reset_info_keys_the_first_reset_lacked_go_to_reset_info(
    venv_class: Any,
) -> None:
    expected = counter_trajectory(
        sekai.SyncVecEnv([lambda: from_gymnasium(NumberedEpisodes())] * 2)
    )
    venv = venv_class([NumberedEpisodes] * 2, autoreset_mode=AutoresetMode.SAME_STEP)
    actual = counter_trajectory(from_gymnasium_vector(venv))
    assert_same_trajectory(expected, actual)
    finished = actual[2][1].infos[0]  # the second step ends the first episode
    assert finished["reset_info"] == {"episode_id": 2} and "episode_id" not in finished


def test_same_step_keys_a_gymnasium_vector_wrapper_adds_stay_at_the_top_level() -> None:
    """Behind vector wrappers, the keys of the last explicit reset() are the reset info."""
    venv = gym.wrappers.vector.RecordEpisodeStatistics(
        gym_sync(lambda: NumberedEpisodes(numbered_from=1), 2, AutoresetMode.SAME_STEP)
    )
    vec = from_gymnasium_vector(venv)
    vec.reset(seed=0)
    vec.step(np.zeros(2, dtype=np.int64))
    info = vec.step(np.zeros(2, dtype=np.int64)).infos[0]
    assert info["reset_info"] == {"episode_id": 2}
    assert info["final_info"] == {"t": 2} and info["t"] == 2
    assert info["episode"]["l"] == 2 and "episode_id" not in info


def test_info_keys_of_any_type_follow_their_masks() -> None:
    infos = [{7: 1.5, ("agent", 1): "x", "_hidden": 1}, {}]
    venv = SyncVectorEnv(
        [lambda info=info: InfoReporter(info) for info in infos],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert from_gymnasium_vector(venv).reset(seed=0).infos == infos


def test_info_scalars_keep_their_types_as_with_sekai_sync_vec_env() -> None:
    info = {"f32": np.float32(1.5), "i8": np.int8(3), "flag": np.bool_(True), "n": 2, "x": 0.5}
    info |= {"yes": True, "when": np.datetime64("2024-01-02")}
    reference = sekai.SyncVecEnv([lambda: from_gymnasium(InfoReporter(info))] * 2)
    venv = SyncVectorEnv([lambda: InfoReporter(info)] * 2, autoreset_mode=AutoresetMode.SAME_STEP)
    expected = reference.reset(seed=0)
    actual = from_gymnasium_vector(venv).reset(seed=0)
    assert_same_trajectory([("reset", expected)], [("reset", actual)])  # types too
    assert [type(v) for v in actual.infos[1].values()] == [type(v) for v in info.values()]


def test_from_gymnasium_vector_results_follow_sekais_contract() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(venv)
    assert isinstance(vec, GymnasiumVectorToSekai)
    assert vec.observation_space == sekai.Box(
        np.array([-4.8, -np.inf, -0.41887903, -np.inf], np.float32),
        np.array([4.8, np.inf, 0.41887903, np.inf], np.float32),
    )
    assert str(vec.batch_action_space) == "MultiDiscrete([2, 2])"
    with pytest.raises(sekai.ResetRequired):
        vec.step(np.zeros(2, np.int64))
    vec.reset(seed=0)
    with pytest.raises(sekai.InvalidAction):
        vec.step(np.array([0, 5]))
    result = vec.step(np.zeros(2, np.int64))
    assert result.rewards.dtype == np.float64 and result.terminated.dtype == np.bool_
    assert type(result.infos) is list and all(type(info) is dict for info in result.infos)


def test_from_gymnasium_vector_reaches_sub_env_attributes() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(venv)
    assert vec.get_attr("spec")[0].id == "CartPole-v1"
    vec.set_attr("marker", [1, 2])
    assert vec.get_attr("marker") == [1, 2]
    vec.set_attr("marker", [7])  # not num_envs items: one value for every sub-env
    assert vec.get_attr("marker") == [[7], [7]]
    assert vec.call("get_wrapper_attr", "marker") == [[7], [7]]


def test_from_gymnasium_vector_set_attr_refuses_one_generator_for_its_sub_envs() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(venv)
    with pytest.raises(ValueError, match=r"cannot seed 2 sub-envs independently"):
        vec.set_attr("np_random", np.random.default_rng(7))
    generators = np.random.default_rng(7).spawn(2)
    vec.set_attr("np_random", generators)
    assert [env.unwrapped.np_random for env in venv.envs] == generators


def test_from_gymnasium_vector_reaches_sub_envs_through_gymnasium_vector_wrappers() -> None:
    """gymnasium's vector wrappers have no get_attr / set_attr / call: the venv under them
    answers, and set_attr changes the sub-envs, not the wrapper object."""
    base = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(gym.wrappers.vector.RecordEpisodeStatistics(base))
    assert vec.get_attr("gravity") == [9.8, 9.8]
    vec.set_attr("gravity", [1.0, 2.0])
    assert base.get_attr("gravity") == (1.0, 2.0)
    assert vec.call("get_wrapper_attr", "gravity") == [1.0, 2.0]
    assert not hasattr(vec.gymnasium_vec, "gravity")


def test_from_gymnasium_vector_set_attr_without_a_set_attr_sets_the_venvs_own_attribute() -> None:
    # A venv that holds every sub-env's state itself (gymnasium's CartPoleVectorEnv) has no
    # set_attr: its own attribute is changed, as get_attr reads it, through wrappers too.
    venv = OneGeneratorVectorEnv()
    vec = from_gymnasium_vector(gym.wrappers.vector.RecordEpisodeStatistics(venv))
    assert vec.get_attr("num_envs") == [3, 3, 3]  # the innermost venv's own attribute
    vec.set_attr("gain", 0.5)
    assert venv.gain == 0.5 and vec.get_attr("gain") == [0.5] * 3
    assert "gain" not in vars(vec.gymnasium_vec)  # not on the wrapper
    vec.set_attr("gain", [0.25] * 3)
    assert venv.gain == 0.25
    with pytest.raises(ValueError, match=r"OneGeneratorVectorEnv holds one 'gain' for every"):
        vec.set_attr("gain", [1.0, 2.0, 3.0])
    with pytest.raises(AttributeError, match=r"has no set_attr and no attribute 'nope'"):
        vec.set_attr("nope", 1.0)
    assert not hasattr(venv, "nope") and venv.gain == 0.25
    generator = np.random.default_rng(7)  # its one generator, as a native env's
    vec.set_attr("np_random", generator)
    assert venv.np_random is generator


def test_sekai_vector_wrappers_work_on_a_converted_venv() -> None:
    venv = gym_sync(lambda: to_gymnasium(CounterEnv()), 2, AutoresetMode.SAME_STEP)
    vec = sekai.VecRecordEpisodeStatistics(from_gymnasium_vector(venv))
    vec.reset()
    for _ in range(10):
        result = vec.step(np.full(2, 2))
        if result.dones.any():
            break
    assert isinstance(result.infos[0]["episode"], sekai.EpisodeStats)


def test_close_closes_the_gymnasium_venv() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    vec = from_gymnasium_vector(venv)
    vec.close()
    assert venv.closed and vec.closed


def test_from_gymnasium_vector_rejects_next_step_autoreset_explaining_how_to_fix_it() -> None:
    venv = gym.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    with pytest.raises(ValueError, match=r"next-step.*AutoresetMode.SAME_STEP"):
        from_gymnasium_vector(venv)
    venv.close()


def test_from_gymnasium_vector_accepts_the_mode_as_a_string() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    venv.metadata["autoreset_mode"] = "SameStep"
    assert from_gymnasium_vector(venv).reset(seed=0).observations.shape == (2, 4)


def test_from_gymnasium_vector_same_step_cannot_freeze() -> None:
    venv = gym_sync(lambda: gym.make("CartPole-v1"), 2, AutoresetMode.SAME_STEP)
    with pytest.raises(ValueError, match=r"AutoresetMode.DISABLED"):
        from_gymnasium_vector(venv, autoreset=False)


def test_from_gymnasium_vector_rejects_a_single_env() -> None:
    with pytest.raises(TypeError, match="from_gymnasium\\(\\)"):
        from_gymnasium_vector(gym.make("CartPole-v1"))  # type: ignore[arg-type]


def test_keys_vector_wrappers_add_stay_at_the_top_level_through_both_bridges() -> None:
    def done_info(vec: sekai.VecEnv) -> dict[str, Any]:
        vec.reset(seed=0)
        for _ in range(20):
            result = vec.step(np.full(2, 2))
            if result.terminated.any() or result.truncated.any():
                return dict(result.infos[0])
        raise AssertionError("no episode ended")

    direct = done_info(sekai.VecRecordEpisodeStatistics(CounterVecEnv(2)))
    bridged = done_info(
        from_gymnasium_vector(
            to_gymnasium_vector(sekai.VecRecordEpisodeStatistics(CounterVecEnv(2)))
        )
    )
    assert bridged.keys() == direct.keys()
    assert bridged["reset_info"] == direct["reset_info"] == {"start": 3}
    # gymnasium's {"r", "l", "t"} crosses the gymnasium side, and comes back as it is.
    assert bridged["episode"].keys() == {"r", "l", "t"}
    assert bridged["episode"]["l"] == direct["episode"].episode_length
    assert bridged["episode"]["r"] == direct["episode"].episode_return


class OneGeneratorVectorEnv(gym.vector.VectorEnv):  # type: ignore[misc]
    """Written as gymnasium's own native vector envs are: one generator, an int seed."""

    metadata = {"autoreset_mode": AutoresetMode.DISABLED}  # noqa: RUF012

    def __init__(self, n: int = 3) -> None:
        self.num_envs = n
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float64)
        self.single_action_space = gym.spaces.Discrete(2)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.x = np.zeros(n)
        self.gain = 1.0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)  # seeding.np_random(seed): an int only
        mask = (options or {}).get("reset_mask", np.ones(self.num_envs, dtype=bool))
        self.x[mask] = self.np_random.normal(size=int(mask.sum()))
        return self.x[:, None].copy(), {}

    def step(self, actions: Any) -> Any:
        n = self.num_envs
        return self.x[:, None].copy(), np.ones(n), np.zeros(n, bool), np.zeros(n, bool), {}


def test_a_venv_seeded_with_one_int_gets_the_users_int_seed() -> None:
    ours = from_gymnasium_vector(OneGeneratorVectorEnv())
    theirs = OneGeneratorVectorEnv()
    np.testing.assert_array_equal(ours.reset(seed=7).observations, theirs.reset(seed=7)[0])
    with pytest.raises(ValueError, match=r"OneGeneratorVectorEnv is seeded with one int"):
        ours.reset(seed=[1, 2, 3])


def test_a_to_gymnasium_vector_venv_takes_a_seed_list_and_sekais_int_seeds() -> None:
    vec = from_gymnasium_vector(to_gymnasium_vector(CounterVecEnv(2)))
    direct = CounterVecEnv(2)
    for seed in ([1, 2], [None, 5], 7):
        np.testing.assert_array_equal(
            vec.reset(seed=seed).observations, direct.reset(seed=seed).observations
        )
        assert vec.call("_rng_seed") == direct.call("_rng_seed")


def test_a_native_sekai_venv_round_trip_gets_its_seeds_as_given() -> None:
    """A native VecEnv combines a list into one generator, and spawns from an int: the int is
    passed on as it is, not as the list of its child seeds."""
    vec = from_gymnasium_vector(to_gymnasium_vector(sekai.make_vec("classic/CartPole-v1", 2)))
    direct = sekai.make_vec("classic/CartPole-v1", 2)
    for seed in (3, [3, 4]):
        np.testing.assert_array_equal(
            vec.reset(seed=seed).observations, direct.reset(seed=seed).observations
        )


class BoolGrid(gym.Env[Any, Any]):
    """A legal gymnasium env whose observations are a bool Box."""

    observation_space = gym.spaces.Box(0, 1, (2, 2), dtype=bool)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return self.np_random.random((2, 2)) < 0.5, {}

    def step(self, action: Any) -> Any:
        return self.np_random.random((2, 2)) < 0.5, 0.0, False, False, {}


def test_a_bool_box_is_refused_naming_the_space_and_what_to_do() -> None:
    venv = gym_sync(BoolGrid, 2, AutoresetMode.SAME_STEP)
    with pytest.raises(TypeError) as error:
        from_gymnasium_vector(venv)
    message = str(error.value)
    assert message.startswith("from_gymnasium_vector(): cannot convert the single observation")
    assert "Box(False, True, (2, 2), bool)" in message
    assert "DtypeObservation(env, np.int8)" in message
    wrapped = gym_sync(
        lambda: gym.wrappers.DtypeObservation(BoolGrid(), np.int8), 2, AutoresetMode.SAME_STEP
    )
    assert from_gymnasium_vector(wrapped).observation_space == sekai.Box(0, 1, (2, 2), np.int8)
