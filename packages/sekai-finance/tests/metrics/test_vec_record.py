"""VecRecordPerformance: every sub-env's episodes summarised as RecordPerformance does."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import sekai
from sekai.finance import PnLSummary, RecordPerformance, VecRecordPerformance
from sekai.vector import AsyncVecEnv, SyncVecEnv

HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(3).normal(0.0, 0.01, 179)))
TRADING = {"prices": HISTORY, "episode_length": 6, "lookback": 5}
STARTS = [10, 40, 70]
ACTIONS = [np.array([2, 1, 0]), np.array([0, 2, 2]), np.array([1, 0, 2])]


def single_summaries(start: int, column: int, episodes: int) -> list:
    """What RecordPerformance gives a single env run from ``start`` with column's actions."""
    env = RecordPerformance(sekai.make("Trading-v0", **TRADING))
    summaries = []
    for _ in range(episodes):
        env.reset(options={"start": start})
        for t in range(TRADING["episode_length"]):
            result = env.step(int(ACTIONS[t % 3][column]))
        summaries.append(result.info["performance"])
    return summaries


@pytest.mark.parametrize("mode", [None, "sync"])
def test_each_sub_env_gets_the_summary_a_single_env_gets(mode):
    vec = VecRecordPerformance(sekai.make_vec("Trading-v0", 3, vectorization_mode=mode, **TRADING))
    vec.reset(options=[{"start": t} for t in STARTS])
    for t in range(TRADING["episode_length"]):
        result = vec.step(ACTIONS[t % 3])
        ends = [info.get("performance") for info in result.infos]
        if t < TRADING["episode_length"] - 1:
            assert ends == [None, None, None]
    expected = [single_summaries(start, i, 1)[0] for i, start in enumerate(STARTS)]
    assert ends == expected
    assert list(vec.summaries) == expected and vec.last_summary == expected[-1]
    assert vec.last_env_index == 2 and vec.last_returns.shape == (6,)


def test_after_an_autoreset_the_next_episode_starts_from_the_reset_info():
    trading = {**TRADING, "sampler": "sequential"}
    vec = VecRecordPerformance(sekai.make_vec("Trading-v0", 2, **trading))
    vec.reset(seed=0)
    for _ in range(2 * TRADING["episode_length"]):
        vec.step(np.array([2, 1]))
    first, second = list(vec.summaries)[:2], list(vec.summaries)[2:]
    single = RecordPerformance(sekai.make("Trading-v0", **trading))
    single.reset(seed=0)
    for _ in range(2):
        for _ in range(TRADING["episode_length"]):
            single.step(2)
        single.reset()  # the sequential sampler's next window, as the autoreset takes it
    assert first[0] == single.summaries[0] and second[0] == single.summaries[1]
    assert first[1].total_return == second[1].total_return == 0.0  # always flat
    assert len(vec.summaries) == 4


def test_frozen_sub_envs_are_summarised_once_per_episode():
    vec = VecRecordPerformance(
        sekai.make_vec("Trading-v0", 3, vector_kwargs={"autoreset": False}, **TRADING)
    )
    vec.reset(options=[{"start": t} for t in STARTS])
    for t in range(TRADING["episode_length"]):
        vec.step(ACTIONS[t % 3])
    for _ in range(4):  # every sub-env is frozen: nothing more is recorded
        later = vec.step(np.array([2, 2, 2]))
        assert all("performance" not in info for info in later.infos)
    assert list(vec.summaries) == [
        single_summaries(start, i, 1)[0] for i, start in enumerate(STARTS)
    ]
    vec.reset(options=[{"start": t} for t in STARTS])
    for t in range(TRADING["episode_length"]):
        vec.step(ACTIONS[t % 3])
    assert len(vec.summaries) == 6 and vec.summaries[3] == vec.summaries[0]


def test_a_mid_episode_reset_drops_the_unfinished_episodes():
    vec = VecRecordPerformance(sekai.make_vec("Trading-v0", 3, **TRADING))
    vec.reset(options=[{"start": t} for t in STARTS])
    vec.step(np.array([2, 2, 2]))
    vec.reset(options=[{"start": t} for t in STARTS])
    for t in range(TRADING["episode_length"]):
        vec.step(ACTIONS[t % 3])
    assert [s.n_periods for s in vec.summaries] == [6, 6, 6]
    assert list(vec.summaries) == [
        single_summaries(start, i, 1)[0] for i, start in enumerate(STARTS)
    ]


def test_pnl_mode_annualises_with_the_session_dt():
    vec = VecRecordPerformance(sekai.make_vec("MarketMaking-v0", 2), pnl_key="wealth")
    vec.reset(seed=0)
    steps = vec.get_attr("n_steps")[0]
    vec.batch_action_space.seed(0)
    for _ in range(steps):
        result = vec.step(vec.batch_action_space.sample())
    summaries = [info["performance"] for info in result.infos]
    assert all(isinstance(s, PnLSummary) and s.n_periods == steps for s in summaries)
    assert vec.last_periods_per_year == pytest.approx(1 / vec.get_attr("dt")[0])
    assert vec.summary()["n_periods"] == steps


def test_async_steps_are_recorded_too():
    fns = [lambda: sekai.make("Trading-v0", **TRADING) for _ in range(2)]

    async def run() -> VecRecordPerformance:
        vec = VecRecordPerformance(AsyncVecEnv(fns))
        await vec.async_reset(options=[{"start": t} for t in STARTS[:2]])
        for t in range(TRADING["episode_length"]):
            await vec.async_step(ACTIONS[t % 3][:2])
        vec.close()
        return vec

    vec = asyncio.run(run())
    assert list(vec.summaries) == [single_summaries(STARTS[i], i, 1)[0] for i in range(2)]


def test_arguments_are_checked_as_record_performance_checks_them():
    venv = SyncVecEnv([lambda: sekai.make("Trading-v0")])
    with pytest.raises(ValueError, match="deque_size must be a positive int"):
        VecRecordPerformance(venv, deque_size=0)
    with pytest.raises(TypeError, match="equity_key must be a str"):
        VecRecordPerformance(venv, equity_key=1)
    with pytest.raises(ValueError, match="periods_per_year must be a finite number > 0"):
        VecRecordPerformance(venv, periods_per_year=-1)
    with pytest.raises(ValueError, match=r"risk_free=0\.02 applies to returns"):
        VecRecordPerformance(venv, pnl_key="wealth", risk_free=0.02)


class _RaisesOnce(sekai.Wrapper):
    """Raises in its ``at``-th step, once."""

    def __init__(self, env, at):
        super().__init__(env)
        self.at, self.steps = at, 0

    def step(self, action):
        self.steps += 1
        if self.steps == self.at:
            raise RuntimeError("boom")
        return self.env.step(action)


def test_an_episode_ending_in_a_step_that_raises_elsewhere_is_dropped_not_merged():
    length = TRADING["episode_length"]
    vec = VecRecordPerformance(
        SyncVecEnv(
            [
                lambda: sekai.make("Trading-v0", **TRADING),
                lambda: _RaisesOnce(sekai.make("Trading-v0", **TRADING), at=length),
            ]
        )
    )
    vec.reset(seed=0)
    for _ in range(length - 1):
        vec.step(np.array([2, 2]))
    with pytest.raises(RuntimeError, match="boom"):
        vec.step(np.array([2, 2]))  # sub-env 0's episode ends here: its end is lost
    for _ in range(length):
        result = vec.step(np.array([2, 2]))
    assert "performance" in result.infos[0]
    assert vec.last_env_index == 0 and vec.last_returns.shape == (length,)  # not 2 * length
