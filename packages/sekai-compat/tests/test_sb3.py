"""to_sb3 / SekaiToSB3: SB3 training on every backend, SB3's VecEnv conventions, indices, masks."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from numpy.typing import NDArray

# sb3-contrib brings SB3 and torch: the compat tests session installs them, elsewhere this skips.
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecNormalize

import sekai
from sekai.compat import (
    SekaiToSB3,
    from_gymnasium,
    from_gymnasium_vector,
    to_gymnasium,
    to_sb3,
)
from sekai.testing.envs import KStepEnv
from sekai.vector._conformance import GOAL, CounterEnv, CounterVecEnv


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Tiny MLPs train faster on one thread, and the machine is shared."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


class MaskedPick(sekai.Env[NDArray[np.float32], Any]):
    """Discrete(4); the allowed actions change every step and are observed; a masked action
    raises InvalidAction, so any run that finishes only took allowed actions."""

    def __init__(self) -> None:
        self.action_space = sekai.Discrete(4)
        self.observation_space = sekai.Box(0.0, 1.0, shape=(4,))
        self.allowed = np.ones(4, dtype=np.int8)
        self.t = 0

    def action_mask(self) -> NDArray[np.int8]:
        return self.allowed.copy()

    def _draw(self) -> NDArray[np.float32]:
        self.allowed = (self.rng.random(4) < 0.5).astype(np.int8)
        self.allowed[self.rng.integers(4)] = 1
        return self.allowed.astype(np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(self._draw(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        if self.allowed[int(action)] != 1:
            raise sekai.InvalidAction(action, self.action_space)
        self.t += 1
        return sekai.StepResult(self._draw(), 1.0, False, self.t >= 10, {})


class Switches(sekai.Env[NDArray[np.float32], Any]):
    """MultiBinary(4) actions: the reward counts the switches set as observed."""

    def __init__(self) -> None:
        self.action_space = sekai.MultiBinary(4)
        self.observation_space = sekai.Box(0.0, 1.0, shape=(4,))
        self.target = np.zeros(4, dtype=np.float32)
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        self.target = self.rng.integers(0, 2, 4).astype(np.float32)
        return sekai.ResetResult(self.target.copy(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        bits = np.asarray(action)  # SB3 gives 0.0 / 1.0 floats
        if bits.shape != (4,) or not np.isin(bits, (0, 1)).all():
            raise sekai.InvalidAction(action, self.action_space)
        self.t += 1
        reward = float((bits == self.target).sum())
        self.target = self.rng.integers(0, 2, 4).astype(np.float32)
        return sekai.StepResult(self.target.copy(), reward, False, self.t >= 8, {})


def portfolio(mode: str) -> sekai.VecEnv:
    kwargs: dict[str, Any] = {"vector_kwargs": {"num_workers": 2}} if mode == "proc" else {}
    return sekai.make_vec("Portfolio-v0", 64, vectorization_mode=mode, **kwargs)


# -- training -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode",
    [
        "native",
        "sync",
        pytest.param("proc"),
    ],
)
def test_ppo_multi_input_policy_trains_on_portfolio_x64(mode: str) -> None:
    venv = to_sb3(portfolio(mode))
    assert isinstance(venv, VecEnv)
    model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=512, n_epochs=1, seed=0)
    model.learn(total_timesteps=4096)
    assert model.num_timesteps == 4096
    venv.close()


def test_ppo_logs_episode_statistics_from_vec_record_episode_statistics() -> None:
    vec = sekai.VecRecordEpisodeStatistics(
        sekai.make_vec("CartPole-v1", 4, vectorization_mode="sync", max_episode_steps=20)
    )
    model = PPO("MlpPolicy", to_sb3(vec), n_steps=64, batch_size=128, n_epochs=1, seed=0)
    model.learn(total_timesteps=512)
    assert len(model.ep_info_buffer) > 0
    episode = model.ep_info_buffer[0]
    assert set(episode) == {"r", "l", "t"} and 1 <= episode["l"] <= 20


def test_learn_logs_to_the_runs_temporary_folder(sb3_logdir: Path) -> None:
    # The conftest's SB3_LOGDIR: else every learn() leaves an SB3-<date> folder in /tmp.
    vec = sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    model = PPO("MlpPolicy", to_sb3(vec), n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(total_timesteps=64)
    assert Path(model.logger.get_dir()) == sb3_logdir


def test_maskable_ppo_only_takes_allowed_actions() -> None:
    venv = to_sb3(sekai.SyncVecEnv([MaskedPick for _ in range(4)]))
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=128, n_epochs=1, seed=0)
    model.learn(total_timesteps=512)  # MaskedPick raises on any masked action
    assert model.num_timesteps == 512


@pytest.mark.parametrize("bridge", ["to_gymnasium", "to_sb3"])
def test_ppo_trains_with_a_multi_binary_action_space(bridge: str) -> None:
    """SB3 refuses a multi-dimensional MultiBinary action space, which MultiBinary((4,)) was."""
    if bridge == "to_gymnasium":
        env: Any = to_gymnasium(Switches())
    else:
        env = to_sb3(sekai.SyncVecEnv([Switches for _ in range(2)]))
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64


def test_ppo_logs_the_episodes_of_sekais_record_episode_statistics_through_to_gymnasium() -> None:
    """Without SB3's Monitor, its episode logging reads info["episode"]: an EpisodeStats made
    learn() raise TypeError after the first rollout."""
    venv = DummyVecEnv(
        [lambda: to_gymnasium(sekai.RecordEpisodeStatistics(sekai.make("CartPole-v1")))]
    )
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(total_timesteps=128)
    assert model.ep_info_buffer and all(set(ep) == {"r", "l", "t"} for ep in model.ep_info_buffer)


# -- SB3's VecEnv conventions -------------------------------------------------------------


def test_results_match_sb3_dummy_vec_env_over_to_gymnasium() -> None:
    n = 4
    ours = to_sb3(sekai.make_vec("CartPole-v1", n, vectorization_mode="sync", max_episode_steps=25))
    theirs = DummyVecEnv(
        [lambda: to_gymnasium(sekai.make("CartPole-v1", max_episode_steps=25)) for _ in range(n)]
    )
    ours.seed(7)
    theirs.seed(7)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    actions = np.random.default_rng(0).integers(0, 2, size=(150, n))
    seen_truncation = seen_termination = False
    for batch in actions:
        obs_a, rew_a, done_a, info_a = ours.step(batch)
        obs_b, rew_b, done_b, info_b = theirs.step(batch)
        np.testing.assert_array_equal(obs_a, obs_b)
        assert rew_a.dtype == rew_b.dtype == np.float32
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(done_a, done_b)
        for a, b in zip(info_a, info_b):
            assert a["TimeLimit.truncated"] == b["TimeLimit.truncated"]
            assert a["elapsed_steps"] == b["elapsed_steps"]
            assert ("terminal_observation" in a) == ("terminal_observation" in b)
            if "terminal_observation" in b:
                np.testing.assert_array_equal(a["terminal_observation"], b["terminal_observation"])
                seen_truncation |= b["TimeLimit.truncated"]
                seen_termination |= not b["TimeLimit.truncated"]
        assert ours.reset_infos == theirs.reset_infos
    assert seen_truncation and seen_termination


def test_reset_infos_hold_each_sub_envs_latest_reset_info_as_dummy_vec_env_does() -> None:
    # KStepEnv's reset info counts its episodes: a stale reset_infos[i] would show.
    ks = (2, 3)
    ours = to_sb3(sekai.SyncVecEnv([functools.partial(KStepEnv, k) for k in ks]))
    theirs = DummyVecEnv([lambda k=k: to_gymnasium(KStepEnv(k)) for k in ks])
    ours.reset()
    theirs.reset()
    assert ours.reset_infos == theirs.reset_infos == [{"episode": 0}, {"episode": 0}]
    for _ in range(6):
        _, _, dones, _ = ours.step(np.zeros(2, int))
        theirs.step(np.zeros(2, int))
        assert ours.reset_infos == theirs.reset_infos, dones
    assert ours.reset_infos == [{"episode": 3}, {"episode": 2}]


@pytest.mark.parametrize("backend", ["native", "sync"])
def test_terminal_observation_is_the_last_observation_of_the_episode(backend: str) -> None:
    n = 3
    vec = CounterVecEnv(n) if backend == "native" else sekai.SyncVecEnv([CounterEnv] * n)
    venv = to_sb3(vec)
    obs = venv.reset()
    previous = obs.copy()
    ended = 0
    for _ in range(20):
        obs, _, dones, infos = venv.step(np.full(n, 2))
        for i in range(n):
            if dones[i]:
                ended += 1
                terminal = infos[i]["terminal_observation"]
                assert terminal[0] >= GOAL  # the position that ended the episode
                assert terminal[1] == previous[i][1] + 1  # one step after the previous obs
                assert obs[i][1] == 0  # the next episode's first observation
                assert infos[i]["TimeLimit.truncated"] is False
            else:
                assert "terminal_observation" not in infos[i]
        previous = obs.copy()
    assert ended >= n


def test_time_limit_truncation_is_flagged_for_sb3() -> None:
    venv = to_sb3(CounterVecEnv(2, max_episode_steps=3))
    venv.reset()
    for _ in range(2):
        _, _, dones, infos = venv.step(np.zeros(2, dtype=np.int64))
        assert not dones.any() and infos[0]["TimeLimit.truncated"] is False
    _, _, dones, infos = venv.step(np.zeros(2, dtype=np.int64))
    assert dones.all()
    assert [info["TimeLimit.truncated"] for info in infos] == [True, True]
    np.testing.assert_array_equal(infos[1]["terminal_observation"][1], 3)


def test_dict_observations_and_terminal_observations_are_dicts() -> None:
    venv = to_sb3(sekai.make_vec("Portfolio-v0", 2, episode_length=3))
    obs = venv.reset()
    assert list(obs) == ["returns", "weights"] and obs["weights"].shape == (2, 6)
    for _ in range(3):
        obs, _, dones, infos = venv.step(np.full((2, 6), 1 / 6, dtype=np.float32))
    assert dones.all()
    terminal = infos[0]["terminal_observation"]
    assert isinstance(terminal, dict) and terminal["weights"].shape == (6,)


def test_seed_and_set_options_apply_at_the_next_reset_only() -> None:
    venv = to_sb3(sekai.make_vec("CartPole-v1", 3, vectorization_mode="sync"))
    assert venv.seed(10) == [10, 11, 12]
    venv.set_options({"low": 0.02, "high": 0.02})
    np.testing.assert_allclose(venv.reset(), 0.02)
    expected = sekai.make_vec("CartPole-v1", 3, vectorization_mode="sync").reset(seed=[10, 11, 12])
    venv.seed(10)
    np.testing.assert_array_equal(venv.reset(), expected.observations)
    assert venv._seeds == [None] * 3 and venv._options == [{}] * 3


def test_sb3_vec_normalize_wraps_the_bridge() -> None:
    venv = VecNormalize(to_sb3(CounterVecEnv(2)), norm_reward=False)
    venv.reset()
    for _ in range(8):
        _, _, dones, infos = venv.step(np.full(2, 2))
        if dones.any():
            terminal = infos[int(np.flatnonzero(dones)[0])]["terminal_observation"]
            assert np.all(np.abs(terminal) < 10)  # normalised by VecNormalize
            break
    else:
        pytest.fail("no episode ended")


# -- attributes, methods and wrappers with indices ----------------------------------------


def test_get_attr_with_indices_on_a_sync_vec_env() -> None:
    venv = to_sb3(sekai.make_vec("CartPole-v1", 3, vectorization_mode="sync"))
    assert venv.get_attr("x_threshold") == [2.4, 2.4, 2.4]
    assert venv.get_attr("max_episode_steps", indices=[0, 2]) == [500, 500]
    assert venv.get_attr("render_mode") == [None] * 3
    assert venv.has_attr("x_threshold") and not venv.has_attr("nope")


def test_set_attr_with_indices_changes_only_those_sub_envs() -> None:
    vec = sekai.make_vec("CartPole-v1", 3, vectorization_mode="sync")
    venv = to_sb3(vec)
    venv.set_attr("x_threshold", 1.0, indices=1)
    assert vec.get_attr("x_threshold") == [2.4, 1.0, 2.4]
    venv.set_attr("x_threshold", 0.5)
    assert vec.get_attr("x_threshold") == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("mode", ["sync", "native"])
def test_set_attr_of_a_sampler_with_indices_gives_each_sub_env_its_own(mode: str) -> None:
    # As set_attr on the VecEnv itself: a Spawnable is spawned per sub-env, so a sequential
    # sampler is neither shared (the sub-envs would advance one another) nor the caller's.
    from sekai.finance import SequentialStart

    prices = 100.0 * np.exp(np.cumsum(np.full(400, 0.001)))
    vec = sekai.make_vec("Trading-v0", 3, vectorization_mode=mode, prices=prices)
    venv = to_sb3(vec)
    given = SequentialStart()
    venv.set_attr("sampler", given, indices=[0, 2])
    samplers = vec.get_attr("sampler")
    assert samplers[0] is not samplers[2] and given not in (samplers[0], samplers[2])
    assert repr(samplers[0]) == repr(given)
    vec.close()


def test_env_method_with_indices_calls_only_those_sub_envs() -> None:
    calls: list[int] = []

    class Counting(CounterEnv):
        def poke(self, value: int) -> int:
            calls.append(value)
            return value * 2

    venv = to_sb3(sekai.SyncVecEnv([Counting] * 3))
    assert venv.env_method("poke", 5, indices=[2]) == [10]
    assert calls == [5]
    assert venv.env_method("poke", value=1) == [2, 2, 2]


def test_env_is_wrapped_looks_through_sekai_wrapper_stacks() -> None:
    venv = to_sb3(sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync"))
    assert venv.env_is_wrapped(sekai.TimeLimit) == [True, True]
    assert venv.env_is_wrapped(sekai.AutoReset, indices=0) == [False]
    assert venv.env_is_wrapped(Monitor) == [False, False]


def test_native_attributes_and_methods_select_indices() -> None:
    vec = CounterVecEnv(3, max_episode_steps=7)
    venv = to_sb3(vec)
    venv.reset()
    venv.step(np.array([0, 1, 2]))
    assert venv.get_attr("position", indices=[1, 2]) == [1, 2]
    assert venv.get_attr("max_episode_steps") == [7, 7, 7]
    assert venv.env_method("_observe", indices=[2, 1, 0])[0].tolist() == [2.0, 1.0, 1.0]
    venv.set_attr("position", 9, indices=[0])
    np.testing.assert_array_equal(vec.position, [9, 1, 2])
    assert venv.env_is_wrapped(sekai.TimeLimit) == [False] * 3
    # A method of the native env acts on every sub-env: it cannot run for sub-env 2 only.
    with pytest.raises(NotImplementedError, match=r"env_method\('reset'\).*CounterVecEnv"):
        venv.env_method("reset", indices=2)
    np.testing.assert_array_equal(vec.position, [9, 1, 2])


def test_proc_backend_keeps_sb3_conventions() -> None:
    vec = sekai.ProcVecEnv([CounterEnv] * 3, num_workers=1)
    venv = to_sb3(vec)
    try:
        venv.reset()
        assert venv.get_attr("position", indices=[1]) == [0]
        venv.set_attr("position", 3)
        assert vec.get_attr("position") == [3, 3, 3]
        vec.set_attr("position", [14, 0, 0])
        np.testing.assert_array_equal(venv.env_method("_obs")[2], [0.0, 0.0, 1.0])
        _, _, dones, infos = venv.step(np.full(3, 2))
        assert dones.tolist() == [True, False, False]
        np.testing.assert_array_equal(infos[0]["terminal_observation"], [16.0, 1.0, 1.0])
        assert infos[0]["TimeLimit.truncated"] is False
        assert venv.env_is_wrapped(Monitor) == [False] * 3
    finally:
        venv.close()


def _poked() -> type[CounterEnv]:
    """A CounterEnv whose ``poke`` adds to its position and counts its calls (defined here, so
    that it travels to worker processes by value)."""

    class Poked(CounterEnv):
        pokes = 0

        def poke(self, amount: int, *, times: int = 1) -> int:
            self.pokes += 1
            self.position += amount * times
            return int(self.position)

    return Poked


@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "vec-wrapper"])
def test_proc_backend_reaches_single_sub_envs(wrapped: bool) -> None:
    poked = _poked()
    vec: sekai.VecEnv = sekai.ProcVecEnv([lambda: sekai.TimeLimit(poked(), 50)] * 4, num_workers=2)
    if wrapped:  # a VecWrapper passes attributes and calls through: its backend is reached
        vec = sekai.VecRecordEpisodeStatistics(vec)
    venv = to_sb3(vec)
    try:
        venv.reset()
        assert venv.env_method("poke", 2, indices=[1], times=3) == [6]
        assert venv.get_attr("pokes") == [0, 1, 0, 0]
        venv.set_attr("position", 9, indices=[0])
        venv.set_attr("position", 7, indices=3)
        assert venv.get_attr("position") == [9, 6, 0, 7]
        assert venv.get_attr("position", indices=[3, 1]) == [7, 6]
        assert venv.get_attr("max_episode_steps", indices=-1) == [50]  # counted from the end
        assert venv.env_method("reset", indices=[2])[0].info == {"start": 3}
        assert vec.get_attr("episodes") == [1, 1, 2, 1]
        with pytest.raises(NotImplementedError, match=r"env_is_wrapped\(TimeLimit\)"):
            venv.env_is_wrapped(sekai.TimeLimit)
    finally:
        venv.close()


def test_indices_out_of_range_are_refused() -> None:
    vec = sekai.SyncVecEnv([_poked()] * 3)
    venv = to_sb3(vec)
    with pytest.raises(IndexError, match="indices holds 3, out of range for 3 sub-envs"):
        venv.get_attr("position", indices=[3])
    with pytest.raises(IndexError, match="indices holds -4"):
        venv.env_method("poke", 1, indices=-4)
    assert vec.get_attr("pokes") == [0, 0, 0]


@pytest.mark.parametrize("backend", ["sync", "proc"])
def test_indices_that_name_a_sub_env_twice_run_it_twice_as_in_sb3(backend: str) -> None:
    # SB3's DummyVecEnv gives one result per entry of indices and runs a method once per entry.
    poked = _poked()
    vec: sekai.VecEnv
    if backend == "sync":
        vec = sekai.SyncVecEnv([poked] * 3)
    else:
        vec = sekai.ProcVecEnv([poked] * 3, num_workers=2)
    venv = to_sb3(vec)
    try:
        venv.reset()
        assert venv.env_method("poke", 1, indices=[1, 1]) == [1, 2]
        assert venv.get_attr("pokes", indices=[1, 1]) == [2, 2]
        assert venv.env_method("poke", 1, indices=[0, 1, 2, 0]) == [1, 3, 1, 2]
        assert venv.get_attr("pokes") == [2, 3, 1]
        assert venv.get_attr("pokes", indices=[2, 0, 2, 2]) == [1, 2, 1, 1]
        venv.set_attr("position", 5, indices=[2, 2])
        venv.set_attr("position", 7, indices=[0, 1, 2, 1])
        assert venv.get_attr("position") == [7, 7, 7]
    finally:
        venv.close()


def test_indices_that_name_a_sub_env_twice_on_a_native_env() -> None:
    vec = CounterVecEnv(3)
    venv = to_sb3(vec)
    venv.reset()
    assert venv.get_attr("position", indices=[1, 1, 0]) == [0, 0, 0]
    venv.set_attr("position", 4, indices=[2, 2])
    np.testing.assert_array_equal(vec.position, [0, 0, 4])
    # A second run on sub-env 0 alone is impossible for one object: refused before any run.
    with pytest.raises(
        NotImplementedError,
        match=r"env_method\('reset'\) with indices that name a sub-env again .*CounterVecEnv is "
        r"one object",
    ):
        venv.env_method("reset", indices=[0, 1, 2, 0])
    np.testing.assert_array_equal(vec.position, [0, 0, 4])


def test_indices_on_a_backend_that_cannot_reach_single_sub_envs() -> None:
    gym_vec = gym.vector.SyncVectorEnv(
        [lambda: to_gymnasium(_poked()())] * 3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    venv = to_sb3(from_gymnasium_vector(gym_vec))
    venv.reset()
    assert venv.get_attr("spec", indices=[1, 1]) == [None, None]  # reads all, keeps those
    for run in (
        lambda: venv.set_attr("pokes", 3, indices=[1]),
        lambda: venv.env_method("get_wrapper_attr", "pokes", indices=[1]),
    ):
        with pytest.raises(NotImplementedError) as caught:
            run()
        message = str(caught.value)
        assert re.match(
            r"SekaiToSB3\.(set_attr\('pokes'\)|env_method\('get_wrapper_attr'\)) with indices "
            "that leave sub-envs out: GymnasiumVectorToSekai cannot reach single sub-envs",
            message,
        ), message
        assert "Pass indices=None to reach every sub-env once" in message
    assert venv.env_method("get_wrapper_attr", "pokes") == [0, 0, 0]


class Answering(sekai.VecWrapper):
    """A VecWrapper that answers ``get_attr``, ``set_attr`` and ``call`` of ``difficulty`` and
    ``hello`` itself and passes the rest through."""

    def __init__(self, venv: sekai.VecEnv) -> None:
        super().__init__(venv)
        self.difficulty = 7

    def get_attr(self, name: str) -> list[Any]:
        if name == "difficulty":
            return [self.difficulty] * self.num_envs
        return self.venv.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        if name == "difficulty":
            self.difficulty = values
            return
        self.venv.set_attr(name, values)

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        if name == "hello":
            return ["hi"] * self.num_envs
        return self.venv.call(name, *args, **kwargs)


def test_indices_go_through_a_vec_wrapper_with_its_own_attribute_methods() -> None:
    vec = sekai.SyncVecEnv([_poked()] * 3)
    venv = to_sb3(Answering(vec))
    venv.reset()
    assert venv.get_attr("difficulty", indices=[2, 0]) == venv.get_attr("difficulty")[:2]
    assert venv.get_attr("pokes", indices=[1]) == [0]
    # Its set_attr and call act on every sub-env: a subset is refused, not run past them.
    for run, what in (
        (lambda: venv.env_method("hello", indices=[1]), r"env_method\('hello'\)"),
        (lambda: venv.env_method("poke", 1, indices=[1]), r"env_method\('poke'\)"),
        (lambda: venv.set_attr("difficulty", 3, indices=[1]), r"set_attr\('difficulty'\)"),
    ):
        with pytest.raises(
            NotImplementedError,
            match=rf"SekaiToSB3\.{what} with indices that leave sub-envs out: Answering has its "
            r"own (call|set_attr)\(\), which acts on all sub-envs at once",
        ):
            run()
    assert vec.get_attr("pokes") == [0, 0, 0]
    assert not any("difficulty" in vars(layer) for env in vec.envs for layer in env)
    assert venv.env_method("hello") == ["hi"] * 3
    venv.set_attr("difficulty", 3)
    assert venv.get_attr("difficulty", indices=[1]) == [3]


def test_env_is_wrapped_on_a_gymnasium_vector_env_says_why_it_cannot_look() -> None:
    gym_vec = gym.vector.SyncVectorEnv(
        [lambda: gym.make("CartPole-v1")] * 2, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    venv = to_sb3(from_gymnasium_vector(gym_vec))
    with pytest.raises(NotImplementedError) as caught:
        venv.env_is_wrapped(sekai.TimeLimit)
    message = str(caught.value)
    assert "outside this process" not in message
    assert message.startswith(
        "SekaiToSB3.env_is_wrapped(TimeLimit) cannot look at the wrapper layers of "
        "GymnasiumVectorToSekai's sub-envs: they are gymnasium envs inside its SyncVectorEnv"
    ), message
    assert venv.env_is_wrapped(Monitor) == [False, False]


def _reach() -> type[sekai.Env[Any, Any]]:
    """A 1-D reach task in the goal-env form SB3's HerReplayBuffer needs (defined here, so that
    it travels to worker processes by value)."""

    class Reach(sekai.Env[dict[str, NDArray[np.float32]], Any]):
        def __init__(self) -> None:
            box = sekai.Box(-10.0, 10.0, shape=(1,))
            self.observation_space = sekai.Dict(
                {"observation": box, "achieved_goal": box, "desired_goal": box}
            )
            self.action_space = sekai.Discrete(2)
            self.x = self.goal = 0.0
            self.t = 0

        def _obs(self) -> dict[str, NDArray[np.float32]]:
            x = np.array([self.x], dtype=np.float32)
            goal = np.array([self.goal], dtype=np.float32)
            return {"observation": x, "achieved_goal": x.copy(), "desired_goal": goal}

        def compute_reward(self, achieved: Any, desired: Any, info: Any) -> Any:
            return -(np.abs(achieved - desired).sum(axis=-1) > 0.5).astype(np.float32)

        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            self._set_rng(seed)
            self.x, self.goal, self.t = 0.0, float(self.rng.integers(-3, 4)), 0
            return sekai.ResetResult(self._obs(), {})

        def step(self, action: Any) -> sekai.StepResult[Any]:
            self.x = float(np.clip(self.x + (1.0 if int(action) else -1.0), -10, 10))
            self.t += 1
            obs = self._obs()
            reward = float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], {}))
            return sekai.StepResult(obs, reward, reward == 0.0, self.t >= 8, {})

    return Reach


def test_her_trains_over_a_proc_vec_env() -> None:
    # HerReplayBuffer calls env_method("compute_reward", ..., indices=[0]) on every sample.
    from stable_baselines3 import DQN, HerReplayBuffer

    venv = to_sb3(sekai.ProcVecEnv([_reach()] * 2, num_workers=2))
    try:
        model = DQN(
            "MultiInputPolicy",
            venv,
            replay_buffer_class=HerReplayBuffer,
            replay_buffer_kwargs={"n_sampled_goal": 2},
            learning_starts=16,
            batch_size=8,
            seed=0,
        )
        model.learn(64)
        assert model.replay_buffer.size() > 0
    finally:
        venv.close()


def test_native_set_attr_for_all_sub_envs_passes_one_value() -> None:
    vec = CounterVecEnv(2, max_episode_steps=7)
    to_sb3(vec).set_attr("max_episode_steps", 4)
    assert vec.max_episode_steps == 4


# -- action masks -------------------------------------------------------------------------


def test_action_masks_flattens_every_sub_envs_mask() -> None:
    vec = sekai.SyncVecEnv([MaskedPick for _ in range(3)])
    venv = to_sb3(vec)
    venv.seed(0)
    venv.reset()
    masks = venv.action_masks()
    assert masks.shape == (3, 4) and masks.dtype == np.bool_
    expected = np.stack([mask == 1 for mask in vec.call("action_mask")])
    np.testing.assert_array_equal(masks, expected)
    rows = venv.env_method("action_masks", indices=[1, 2])
    np.testing.assert_array_equal(np.stack(rows), expected[1:])
    assert venv.has_attr("action_masks")


def test_action_masks_is_missing_without_action_mask() -> None:
    from sb3_contrib.common.maskable.utils import is_masking_supported

    venv = to_sb3(sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync"))
    assert not venv.has_attr("action_masks") and not is_masking_supported(venv)
    assert not hasattr(venv, "action_masks")  # as to_gymnasium's
    assert not hasattr(VecNormalize(venv), "action_masks")  # SB3's wrappers look inside
    message = r"^SekaiToSB3 has no action_masks\(\): the sub-envs of SyncVecEnv.* define no"
    with pytest.raises(AttributeError, match=message):
        venv.get_attr("action_masks")
    with pytest.raises(AttributeError, match=message):
        venv.action_masks()
    with pytest.raises(AttributeError, match=message):
        venv.env_method("action_masks")


def test_sb3_contrib_finds_and_reads_the_masks_of_masked_sub_envs() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = to_sb3(sekai.SyncVecEnv([MaskedPick for _ in range(3)]))
    venv.seed(0)
    venv.reset()
    assert hasattr(venv, "action_masks") and is_masking_supported(venv)
    wrapped = VecNormalize(venv)
    assert hasattr(wrapped, "action_masks") and is_masking_supported(wrapped)
    np.testing.assert_array_equal(get_action_masks(venv), venv.action_masks())
    np.testing.assert_array_equal(get_action_masks(wrapped), venv.action_masks())


def test_get_attr_action_masks_gives_each_sub_env_its_own_mask() -> None:
    # As SB3's DummyVecEnv: entry i is sub-env i's action_masks, giving its own (n,) mask.
    venv = to_sb3(sekai.SyncVecEnv([MaskedPick for _ in range(3)]))
    venv.seed(0)
    venv.reset()
    masks = venv.action_masks()
    assert len({row.tobytes() for row in masks}) > 1  # the sub-envs' masks differ
    getters = venv.get_attr("action_masks")
    assert len(getters) == 3
    for getter, mask in zip(getters, masks):
        np.testing.assert_array_equal(getter(), mask)
    [getter] = venv.get_attr("action_masks", indices=[2])
    np.testing.assert_array_equal(getter(), masks[2])


def test_a_gymnasium_action_mask_that_takes_arguments_is_no_sb3_mask() -> None:
    # gymnasium's Taxi has action_mask(state), a helper that is not sekai's action_mask().
    from sb3_contrib.common.maskable.utils import is_masking_supported

    taxi = max(env_id for env_id in gym.registry if env_id.startswith("Taxi-v"))
    venv = to_sb3(sekai.SyncVecEnv([lambda: from_gymnasium(gym.make(taxi))] * 2))
    venv.reset()
    assert not venv.has_attr("action_masks") and not is_masking_supported(venv)


def test_a_gymnasium_vector_envs_action_mask_that_takes_arguments_is_no_sb3_mask() -> None:
    taxi = max(env_id for env_id in gym.registry if env_id.startswith("Taxi-v"))
    same_step = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    gym_vec = gym.make_vec(taxi, 2, vectorization_mode="sync", vector_kwargs=same_step)
    vec = from_gymnasium_vector(gym_vec)
    venv = to_sb3(vec)
    venv.reset()
    assert not venv.has_attr("action_masks")  # gymnasium's get_attr called action_mask()
    with pytest.raises(AttributeError, match=r"^Each sub-env of this gymnasium vector env has "):
        vec.get_attr("action_mask")


# -- construction -------------------------------------------------------------------------


def test_to_sb3_rejects_a_vec_env_without_autoreset() -> None:
    vec = sekai.make_vec("CartPole-v1", 2, vector_kwargs={"autoreset": False})
    with pytest.raises(ValueError, match="autoreset=True"):
        to_sb3(vec)


def test_to_sb3_rejects_a_single_env_pointing_to_to_gymnasium() -> None:
    with pytest.raises(TypeError, match="to_gymnasium"):
        to_sb3(sekai.make("CartPole-v1"))  # type: ignore[arg-type]


class Trade(sekai.Env[NDArray[np.float32], Any]):
    """The quickstart's -1 short / 0 flat / +1 long env (any action space), recording the
    actions it is given."""

    def __init__(self, action_space: sekai.Space[Any] | None = None) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (2,))
        self.action_space = action_space or sekai.Discrete(3, start=-1)
        self.seen: list[Any] = []

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(np.zeros(2, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        assert action in self.action_space
        self.seen.append(action if isinstance(action, np.ndarray) else int(action))
        self.t += 1
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, self.t >= 20, {})


class Shifted(sekai.ActionWrapper[Any, Any, Any]):
    """SB3's indices 0, 1, 2 as the env's -1, 0, +1: the wrapper to_sb3's error suggests."""

    def __init__(self, env: sekai.Env[Any, Any]) -> None:
        super().__init__(env)
        self.action_space = sekai.Discrete(3)

    def action(self, action: Any) -> int:
        return int(action) - 1


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            sekai.Discrete(3, start=-1),
            r"^to_sb3\(\) cannot use the action space Discrete\(3, start=-1\): SB3's policies "
            r"pick the actions 0\.\.2 and ignore start, .* sekai\.ActionWrapper whose "
            r"action_space is Discrete\(3\) and whose action\(\) returns action - 1 ",
        ),
        (
            sekai.MultiDiscrete([3, 4], start=[0, -2]),
            r"MultiDiscrete\(\[3, 4\], start=\[0, -2\]\): SB3's policies pick each entry from 0 "
            r"to nvec - 1 and ignore start, .* action_space is MultiDiscrete\(\[3, 4\]\) and "
            r"whose action\(\) returns action \+ \[0, -2\] ",
        ),
        (
            sekai.MultiDiscrete([[2, 3], [4, 5]]),
            r"MultiDiscrete policy for a 1-D nvec only, not \(2, 2\)\. .* action_space is "
            r"MultiDiscrete\(\[2, 3, 4, 5\]\) and whose action\(\) returns "
            r"action\.reshape\(\(2, 2\)\) ",
        ),
        (
            sekai.MultiBinary((2, 3)),
            r"^to_sb3\(\) cannot use the action space MultiBinary\(\(2, 3\)\): SB3 builds a "
            r"MultiBinary policy for a 1-D shape only, not \(2, 3\)\. Wrap each sub-env in a "
            r"sekai\.ActionWrapper whose action_space is MultiBinary\(6\) and whose action\(\) "
            r"returns action\.reshape\(\(2, 3\)\) \(make_vec",
        ),
    ],
    ids=["discrete-start", "multi-discrete-start", "multi-discrete-2d", "multi-binary-2d"],
)
def test_to_sb3_refuses_discrete_action_spaces_sb3_cannot_drive(
    space: sekai.Space[Any], message: str
) -> None:
    # SB3's policies would pick indices from 0: the env would get other actions, or none fit.
    vec = sekai.SyncVecEnv([lambda: Trade(space)] * 2)
    with pytest.raises(ValueError, match=message):
        to_sb3(vec)
    vec.close()


class Watch(sekai.Env[Any, int]):
    """An env whose observations (any observation space) step through the space's values."""

    def __init__(self, observation_space: sekai.Space[Any]) -> None:
        self.observation_space = observation_space
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.observation_space.seed(0)
        self.t = 0
        return sekai.ResetResult(self.observation_space.sample(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        observation = self.observation_space.sample()
        return sekai.StepResult(observation, float(action), False, self.t >= 10, {})


def _assert_to_sb3_refuses(space: sekai.Space[Any], message: str) -> None:
    """to_sb3() of a SyncVecEnv of ``Watch(space)`` raises a ValueError matching ``message``."""
    vec = sekai.SyncVecEnv([lambda: Watch(space)] * 2)
    with pytest.raises(ValueError, match=message):
        to_sb3(vec)
    vec.close()


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            sekai.Discrete(3, start=1),
            r"^to_sb3\(\) cannot use the observation space Discrete\(3, start=1\): SB3's "
            r"policies one-hot encode the observations 0\.\.2 and ignore start, so they would "
            r"read other observations than the env gave \(or fail on those out of range\)\. "
            r"Wrap each sub-env in a sekai\.ObservationWrapper whose observation_space is "
            r"Discrete\(3\) and whose observation\(\) returns observation - 1 \(make_vec\(\.\.\., "
            r"wrappers=\[\.\.\.\]\) adds it to every sub-env\), or give the env such an "
            r"observation space\.$",
        ),
        (
            sekai.Discrete(4, start=-2),
            r"observation space Discrete\(4, start=-2\): .* the observations 0\.\.3 .* "
            r"observation_space is Discrete\(4\) and whose observation\(\) returns observation "
            r"\+ 2 ",
        ),
        (
            sekai.MultiDiscrete([3, 4], start=[0, -2]),
            r"observation space MultiDiscrete\(\[3, 4\], start=\[0, -2\]\): SB3's policies "
            r"one-hot encode each entry from 0 to nvec - 1 and ignore start, .* "
            r"observation_space is MultiDiscrete\(\[3, 4\]\) and whose observation\(\) returns "
            r"observation - \[0, -2\] ",
        ),
        (
            sekai.Dict({"pos": sekai.Box(-1.0, 1.0, (2,)), "mode": sekai.Discrete(2, start=1)}),
            r"observation space Dict\(\{.*\}\): its entry 'mode', Discrete\(2, start=1\): "
            r"SB3's policies one-hot encode the observations 0\.\.1 .* whose observation_space "
            r"holds Discrete\(2\) under 'mode' and whose observation\(\) puts "
            r"observation\['mode'\] - 1 there ",
        ),
    ],
    ids=["discrete-start", "discrete-negative-start", "multi-discrete-start", "dict-entry"],
)
def test_to_sb3_refuses_discrete_observation_spaces_with_a_start(
    space: sekai.Space[Any], message: str
) -> None:
    # SB3 one-hot encodes the observation as an index from 0: it would read other values, or
    # torch's one_hot fails on those out of range
    _assert_to_sb3_refuses(space, message)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            sekai.MultiDiscrete([[2, 3], [4, 5]]),
            r"^to_sb3\(\) cannot use the observation space "
            r"MultiDiscrete\(\[\[2, 3\], \[4, 5\]\]\): SB3's policies one-hot encode a "
            r"MultiDiscrete with a 1-D nvec only, not \(2, 2\) "
            r"\(they fail on it\)\. Wrap each sub-env in a sekai\.ObservationWrapper whose "
            r"observation_space is MultiDiscrete\(\[2, 3, 4, 5\]\) and whose observation\(\) "
            r"returns observation\.ravel\(\) \(make_vec",
        ),
        (
            sekai.MultiDiscrete([[2, 3]], start=[[1, 0]]),
            r"not \(1, 2\) \(they fail on it\), and each entry from 0 to nvec - 1 and ignore "
            r"start, .* observation_space is MultiDiscrete\(\[2, 3\]\) and whose observation\(\) "
            r"returns \(observation - \[\[1, 0\]\]\)\.ravel\(\) ",
        ),
        (
            sekai.Dict({"grid": sekai.MultiDiscrete([[2, 2], [2, 2]])}),
            r"its entry 'grid', MultiDiscrete\(\[\[2, 2\], \[2, 2\]\]\): SB3's policies one-hot "
            r"encode a MultiDiscrete with a 1-D nvec only, .* holds MultiDiscrete\(\[2, 2, 2, "
            r"2\]\) under 'grid' and whose observation\(\) puts observation\['grid'\]\.ravel\(\) "
            r"there ",
        ),
    ],
    ids=["2d", "2d-start", "dict-entry"],
)
def test_to_sb3_refuses_multi_dimensional_multi_discrete_observation_spaces(
    space: sekai.Space[Any], message: str
) -> None:
    # SB3's preprocessing failed on them with "The truth value of an array with more than one
    # element is ambiguous" (torch's "empty(): argument 'size' ..." in a Dict)
    _assert_to_sb3_refuses(space, message)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3),
            r"^to_sb3\(\) cannot use the observation space MaskedBox\(.*\): SB3's "
            r"MultiInputPolicy keys a torch ModuleDict by the observation's keys, and torch "
            r"refuses \['values'\] .* Wrap each sub-env in sekai\.FlattenObservation, which "
            r"makes its values and mask one Box, and train with MlpPolicy \(make_vec",
        ),
        (
            sekai.Dict(
                {"keys": sekai.Discrete(2), "a.b": sekai.Discrete(2), "ok": sekai.Discrete(2)}
            ),
            r"torch refuses \['keys', 'a\.b'\] .* Wrap each sub-env in a "
            r"sekai\.ObservationWrapper whose observation_space and observation\(\) use other keys",
        ),
    ],
    ids=["masked-box", "dict-keys"],
)
def test_to_sb3_refuses_dict_observation_keys_sb3s_multi_input_policy_cannot_hold(
    space: sekai.Space[Any], message: str
) -> None:
    # MultiInputPolicy failed in torch with KeyError: "attribute 'values' already exists"
    _assert_to_sb3_refuses(space, message)


def test_a_masked_box_observation_flattened_as_to_sb3_advises_trains() -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3)
    venv = to_sb3(sekai.SyncVecEnv([lambda: sekai.FlattenObservation(Watch(space))] * 2))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(total_timesteps=64)
    assert model.num_timesteps == 64


def test_discrete_observation_spaces_from_zero_and_1d_multi_binary_actions_are_accepted() -> None:
    spaces = [
        sekai.Discrete(3),
        sekai.MultiDiscrete([3, 4]),
        sekai.Dict({"mode": sekai.Discrete(2), "pos": sekai.Box(-1.0, 1.0, (2,))}),
    ]
    for space in spaces:
        venv = to_sb3(sekai.SyncVecEnv([functools.partial(Watch, space)] * 2))
        venv.close()
    to_sb3(sekai.SyncVecEnv([lambda: Trade(sekai.MultiBinary(6))] * 2)).close()


class FromOne(sekai.ObservationWrapper[Any, Any, Any]):
    """Discrete(3, start=1) observations as 0, 1, 2: the wrapper to_sb3's error suggests."""

    def __init__(self, env: sekai.Env[Any, Any]) -> None:
        super().__init__(env)
        self.observation_space = sekai.Discrete(3)

    def observation(self, observation: Any) -> int:
        return int(observation) - 1


class Unflatten(sekai.ActionWrapper[Any, Any, Any]):
    """MultiBinary(6) actions as (2, 3) ones: the wrapper to_sb3's error suggests."""

    def __init__(self, env: sekai.Env[Any, Any]) -> None:
        super().__init__(env)
        self.action_space = sekai.MultiBinary(6)

    def action(self, action: Any) -> Any:
        return np.asarray(action).reshape((2, 3))


def test_ppo_trains_through_the_suggested_observation_and_multi_binary_wrappers() -> None:
    observed = to_sb3(sekai.SyncVecEnv([lambda: FromOne(Watch(sekai.Discrete(3, start=1)))] * 2))
    PPO("MlpPolicy", observed, n_steps=16, batch_size=16, n_epochs=1, seed=0).learn(32)
    observed.close()
    binary = to_sb3(sekai.SyncVecEnv([lambda: Unflatten(Trade(sekai.MultiBinary((2, 3))))] * 2))
    PPO("MlpPolicy", binary, n_steps=16, batch_size=16, n_epochs=1, seed=0).learn(32)
    seen = binary.get_attr("seen")[0]
    assert seen and all(a.shape == (2, 3) for a in seen)
    binary.close()


def test_ppo_trains_on_a_start_minus_one_env_through_the_suggested_wrapper() -> None:
    venv = to_sb3(sekai.SyncVecEnv([lambda: Shifted(Trade())] * 2))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, verbose=0, seed=0)
    model.learn(64)
    assert set(venv.get_attr("seen")[0]) == {-1, 0, 1}
    venv.close()


def test_to_sb3_keeps_metadata_and_closes_the_vec_env() -> None:
    vec = sekai.make_vec("CartPole-v1", 2, vectorization_mode="sync")
    venv = to_sb3(vec)
    assert isinstance(venv, SekaiToSB3)
    assert venv.metadata == {"render_fps": 50, "render_modes": []}
    assert repr(venv) == "SekaiToSB3(SyncVecEnv(num_envs=2))"
    venv.close()
    assert vec.closed


# 2,048 steps: a few seconds, so it runs in every test session.
def test_maskable_ppo_on_limit_order_book_only_samples_allowed_actions() -> None:
    lob = to_gymnasium(sekai.FlattenObservation(sekai.make("LimitOrderBook-v0")))
    lob.reset(seed=0)
    assert str(lob.action_space) == "MultiDiscrete([6 6 3])"
    assert lob.action_masks().shape == (15,)
    taken: list[bool] = []
    original_step = lob.step

    def checked_step(action: Any) -> Any:
        mask = lob.action_masks()
        offsets = np.cumsum([0, *lob.action_space.nvec[:-1]])
        taken.append(bool(all(mask[o + int(a)] for o, a in zip(offsets, action))))
        return original_step(action)

    lob.step = checked_step  # type: ignore[method-assign]
    # Two rollouts of 256 steps with an update between them: the trained policy samples too.
    model = MaskablePPO("MlpPolicy", lob, n_steps=256, batch_size=64, verbose=0, seed=0)
    model.learn(total_timesteps=512)
    assert len(taken) >= 512 and all(taken)


# 2,048 steps: a few seconds, so it runs in every test session.
def test_ppo_trains_on_flattened_market_as_on_migration_page() -> None:
    market = to_gymnasium(sekai.FlattenObservation(sekai.make("Market-v0")))
    assert type(market.observation_space).__name__ == "Box"
    model = PPO("MlpPolicy", market, verbose=0, seed=0)
    model.learn(total_timesteps=2_048)
    assert model.num_timesteps >= 2_048
