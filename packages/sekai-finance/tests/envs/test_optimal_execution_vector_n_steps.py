"""OptimalExecution-v0's native env with ``n_steps`` changed mid-episode ends its episodes when
the single env does, and its last observation stays in the space as the single env's does."""

from __future__ import annotations

import numpy as np

import sekai
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv

SELL = np.full((2, 1), 0.05, np.float32)  # 5% of what is left: never all of it before the end


def _raised_to_ten() -> tuple[sekai.VecEnv, OptimalExecutionEnv]:
    """The native env and a single env, both built with n_steps=5, after one step each
    raised to 10."""
    vec = sekai.make_vec("OptimalExecution-v0", 2, n_steps=5)
    single = OptimalExecutionEnv(n_steps=5)
    vec.reset(seed=0)
    single.reset(seed=0)
    vec.step(SELL)
    single.step(SELL[0])
    vec.set_attr("n_steps", 10)
    single.n_steps = 10
    return vec, single


def test_n_steps_raised_mid_episode_ends_both_envs_at_the_new_end() -> None:
    vec, single = _raised_to_ten()
    ends = []
    for step in range(2, 12):
        vec_done = vec.step(SELL).dones
        single_done = single.step(SELL[0]).done
        assert vec_done.tolist() == [single_done] * 2
        if single_done:
            ends.append(step)
            break
    assert ends == [10]
    vec.close()


def test_n_steps_lowered_below_the_clock_leaves_the_last_observation_in_the_space() -> None:
    vec, single = _raised_to_ten()
    for _ in range(5):  # to step 6, past the first end
        assert not vec.step(SELL).dones.any()
        assert not single.step(SELL[0]).done
    vec.set_attr("n_steps", 6)  # the clock (6) is already at the new end
    single.n_steps = 6
    result = vec.step(SELL)
    last = single.step(SELL[0])
    assert result.dones.tolist() == [True, True] and last.terminated
    assert last.observation[:2].tolist() == [0.0, 0.0]  # all sold, no time left
    for info in result.infos:
        final = info["final_observation"]
        assert final[:2].tolist() == [0.0, 0.0]
        assert single.observation_space.contains(final)
    vec.close()
