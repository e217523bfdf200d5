"""The finance examples of the user pages (vector-environments, gymnasium-migration), as written."""

from __future__ import annotations

import warnings

import numpy as np

import sekai
from sekai.finance import SequentialStart

history = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 179)))
trading = {"prices": history, "episode_length": 21, "lookback": 10}


def test_make_vec_picks_the_native_portfolio():
    assert str(sekai.make_vec("Portfolio-v0", num_envs=64)) == "PortfolioVecEnv(num_envs=64)"
    sync = sekai.make_vec("Portfolio-v0", num_envs=64, vectorization_mode="sync")
    assert str(sync) == "SyncVecEnv(num_envs=64)"


def test_sequential_sampler_replays_the_same_window_in_every_sub_env():
    replay = sekai.make_vec("Trading-v0", 3, sampler="sequential", **trading)
    first = replay.reset(seed=0)
    assert [info["timestamp"] for info in first.infos] == [10, 10, 10]
    assert repr([info["timestamp"] for info in first.infos]) == "[10, 10, 10]"
    replay.close()


def test_offset_samplers_split_the_history_between_sync_sub_envs():
    lanes = 4
    split = sekai.SyncVecEnv(
        [
            lambda i=i: sekai.make(
                "Trading-v0", sampler=SequentialStart(start=21 * i, stride=21 * lanes), **trading
            )
            for i in range(lanes)
        ]
    )
    step = split.reset(seed=0)
    firsts = [info["timestamp"] for info in step.infos]
    for _ in range(21):  # one episode each; the autoreset starts the next window
        step = split.step(np.ones(lanes, int))
    firsts += [info["reset_info"]["timestamp"] for info in step.infos]
    assert sorted(int(t) for t in firsts) == [10, 31, 52, 73, 94, 115, 136, 157]
    split.close()


def test_per_sub_env_start_options_on_the_native_env():
    lanes = 4
    starts = list(range(10, len(history) - 21, 21))  # the first decision of every window
    split = sekai.make_vec("Trading-v0", lanes, vector_kwargs={"autoreset": False}, **trading)
    covered = []
    for k in range(0, len(starts), lanes):
        step = split.reset(options=[{"start": t} for t in starts[k : k + lanes]])
        covered += [info["timestamp"] for info in step.infos]
        finished = np.zeros(lanes, bool)
        while not finished.all():
            step = split.step(np.ones(lanes, int))
            finished |= step.dones
    assert (
        f"{type(split).__name__} {covered}" == "TradingVecEnv [10, 31, 52, 73, 94, 115, 136, 157]"
    )
    split.close()


def test_portfolio_through_to_gymnasium():
    from sekai.compat import to_gymnasium

    gym_env = to_gymnasium(sekai.make("Portfolio-v0"))
    assert f"{type(gym_env).__name__} {gym_env.action_space}" == (
        "SekaiToGymnasium Box(0.0, 1.0, (6,), float32)"
    )
    obs, _info = gym_env.reset(seed=0)
    assert sorted(obs) == ["returns", "weights"]
    from gymnasium.utils.env_checker import check_env as gym_check_env

    with warnings.catch_warnings():  # gymnasium advises (unbounded Box), which is not failing
        warnings.simplefilter("ignore", UserWarning)
        gym_check_env(gym_env)
