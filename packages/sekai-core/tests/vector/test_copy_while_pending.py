"""A VecEnv refuses to be copied or pickled while one of its async calls runs (its sub-envs are
in the middle of it, and the copy would count the call as pending forever); once the call is
over, copies work as before. ProcVecEnv and RayVecEnv refuse every copy (tests/vector/proc)."""

from __future__ import annotations

import asyncio
import copy
import pickle
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, VecEnv, VecWrapper

COPIERS = {
    "pickle": lambda vec: pickle.loads(pickle.dumps(vec)),
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}
REFUSAL = r"AsyncVecEnv cannot be copied or pickled while its async_reset\(\) or async_step\(\) "


class Gated(sekai.Env):  # type: ignore[type-arg]
    """``async_step`` waits for ``gate`` (an asyncio.Event given later, so a copy has none)."""

    gate: asyncio.Event | None = None

    def __init__(self) -> None:
        self.observation_space = sekai.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> Any:
        return sekai.StepResult(np.ones(1, np.float32), 1.0, False, False, {})

    async def async_step(self, action: Any) -> Any:
        if Gated.gate is not None:
            await Gated.gate.wait()
        return self.step(action)


# A shallow copy of a wrapper shares the env it wraps, pending call and all: nothing to refuse.
@pytest.mark.parametrize(
    ("how", "wrapped"), [(how, False) for how in COPIERS] + [("pickle", True), ("deepcopy", True)]
)
def test_an_async_vec_env_refuses_copies_while_an_async_step_runs(how: str, wrapped: bool) -> None:
    async def main() -> None:
        Gated.gate = asyncio.Event()
        vec = AsyncVecEnv([Gated, Gated])
        outer: VecEnv = VecWrapper(vec) if wrapped else vec  # a wrapper's copy copies vec
        await vec.async_reset(seed=0)
        task = asyncio.ensure_future(vec.async_step(np.array([1, 1])))
        await asyncio.sleep(0)  # the step now waits inside the sub-envs
        with pytest.raises(sekai.AsyncCallPending, match=REFUSAL + r".*Await the call first"):
            COPIERS[how](outer)
        Gated.gate.set()
        assert (await task).rewards.tolist() == [1.0, 1.0]
        twin = COPIERS[how](outer)  # the call is over: copies work, and close
        assert (await twin.async_step(np.array([0, 0]))).rewards.tolist() == [1.0, 1.0]
        twin.close()
        vec.close()

    try:
        asyncio.run(main())
    finally:
        Gated.gate = None
