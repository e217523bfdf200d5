"""An env may return one info dict, refilled in place, from every reset() and step(): no result
that sekai hands out may share it, and nothing sekai adds may be written into it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, SyncVecEnv


class ReusedInfoEnv(sekai.Env[Any, Any]):
    """Episodes of two steps; ``self.info`` is cleared and refilled by every reset and step."""

    observation_space = sekai.Box(0.0, 10.0, shape=(1,))
    action_space = sekai.Discrete(2)

    def __init__(self) -> None:
        self.info: dict[str, Any] = {}
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        self.info.clear()
        self.info["phase"] = "reset"
        return sekai.ResetResult(np.zeros(1, dtype=np.float32), self.info)

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        self.info.clear()
        self.info.update(phase="step", t=self.t)
        obs = np.full(1, self.t, dtype=np.float32)
        return sekai.StepResult(obs, 1.0, self.t >= 2, False, self.info)


def test_autoreset_keeps_the_ending_steps_info_although_the_reset_refills_the_dict() -> None:
    env = sekai.AutoReset(ReusedInfoEnv())
    env.reset(seed=0)
    env.step(0)
    info = env.step(0).info
    assert info["final_info"] == {"phase": "step", "t": 2}
    assert info["reset_info"] == {"phase": "reset"}
    assert info["t"] == 2 and info["phase"] == "step"
    env.step(0)  # refills the dict the reset returned
    assert info["reset_info"] == {"phase": "reset"}


def test_episode_statistics_are_not_written_into_the_envs_dict() -> None:
    env = sekai.RecordEpisodeStatistics(ReusedInfoEnv())
    env.reset(seed=0)
    env.step(0)
    ending = env.step(0).info
    assert ending["episode"].episode_length == 2
    assert "episode" not in env.unwrapped.info  # type: ignore[attr-defined]
    env.reset()
    assert "episode" not in env.step(0).info


BACKENDS = {"sync": SyncVecEnv, "async": AsyncVecEnv}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_vector_infos_are_distinct_and_autoreset_keeps_the_ending_info(backend: str) -> None:
    with BACKENDS[backend]([ReusedInfoEnv] * 2) as vec:
        reset = vec.reset(seed=0)
        first = vec.step([0, 0])
        second = vec.step([0, 0])  # both end and reset within the step
        infos = [*reset.infos, *first.infos, *second.infos]
        assert len({id(info) for info in infos}) == 6
        envs = vec.envs  # type: ignore[attr-defined]
        assert all(info is not env.unwrapped.info for info in infos for env in envs)
        assert reset.infos[0] == {"phase": "reset"}
        assert first.infos[0] == {"phase": "step", "t": 1}
        ending = second.infos[1]
        assert ending["final_info"] == {"phase": "step", "t": 2}
        assert ending["reset_info"] == {"phase": "reset"}
        vec.step([0, 0])  # refills the dicts the resets returned
        assert ending["reset_info"] == {"phase": "reset"}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_vector_episode_statistics_stay_in_their_result_after_the_next_reset(backend: str) -> None:
    inner = BACKENDS[backend]([ReusedInfoEnv] * 2, autoreset=False)
    with sekai.VecRecordEpisodeStatistics(inner) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        ending = vec.step([0, 0])
        vec.reset()
        assert [info["episode"].extra for info in ending.infos] == [
            {"env_index": 0},
            {"env_index": 1},
        ]
        assert ending.infos[1]["t"] == 2
