"""Composite and integer spaces on SyncVecEnv, AsyncVecEnv and ProcVecEnv (shared memory on and
off): every sub-env gets the action a single env gets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Dict, Discrete, Space, Tuple
from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv, VecEnv

Factory = Callable[..., VecEnv]

BACKENDS: dict[str, Factory] = {
    "sync": lambda fns, **kw: SyncVecEnv(fns, **kw),
    "async": lambda fns, **kw: AsyncVecEnv(fns, **kw),
    "proc-shared": lambda fns, **kw: ProcVecEnv(fns, context="fork", num_workers=2, **kw),
    "proc-pickled": lambda fns, **kw: ProcVecEnv(
        fns, context="fork", num_workers=2, shared_memory=False, **kw
    ),
}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Recorder(sekai.Env[Any, Any]):
    """Counts its steps and reports the action it was given in its info."""

    def __init__(self, action_space: Space[Any]) -> None:
        self.observation_space = Box(0.0, 100.0, (1,))
        self.action_space = action_space
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(np.array([0.0], np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        info = {"action": action, "member": action in self.action_space}
        return sekai.StepResult(np.array([self.t], np.float32), 1.0, False, False, info)


def _recorders(space: Space[Any], n: int) -> list[Callable[[], Recorder]]:
    return [lambda: Recorder(space)] * n


X = np.array([[0.25], [0.5], [0.75]], np.float32)

# (action space, batch of 3 actions, the action each sub-env must get)
EMPTY_PARTS: dict[str, tuple[Space[Any], Any, list[Any]]] = {
    "dict-with-empty-tuple": (
        Dict(flags=Tuple(()), x=Box(0.0, 1.0, (1,))),
        {"flags": (), "x": X},
        [{"flags": (), "x": X[i]} for i in range(3)],
    ),
    "dict-with-empty-dict": (
        Dict(flags=Dict(), x=Box(0.0, 1.0, (1,))),
        {"flags": {}, "x": X},
        [{"flags": {}, "x": X[i]} for i in range(3)],
    ),
    "per-env-dicts": (
        Dict(flags=Tuple(()), x=Box(0.0, 1.0, (1,))),
        [{"flags": (), "x": X[i]} for i in range(3)],
        [{"flags": (), "x": X[i]} for i in range(3)],
    ),
    "tuple-with-empty-dict": (
        Tuple((Dict(), Discrete(2))),
        ({}, np.array([0, 1, 1])),
        [({}, 0), ({}, 1), ({}, 1)],
    ),
    "empty-tuple": (Tuple(()), (), [(), (), ()]),
    "empty-dict": (Dict(), {}, [{}, {}, {}]),
    "nested-empty": (Dict(a=Dict(b=Tuple(()))), {"a": {"b": ()}}, [{"a": {"b": ()}}] * 3),
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("case", list(EMPTY_PARTS))
def test_an_empty_tuple_or_dict_in_the_action_space_steps_every_sub_env(
    backend: str, case: str
) -> None:
    space, batch, expected = EMPTY_PARTS[case]
    with BACKENDS[backend](_recorders(space, 3)) as vec:
        vec.reset(seed=0)
        result = vec.step(batch)
        assert vec.get_attr("t") == [1, 1, 1]
        np.testing.assert_array_equal(result.observations, [[1.0], [1.0], [1.0]])
        np.testing.assert_array_equal(result.rewards, [1.0, 1.0, 1.0])
        for info, action in zip(result.infos, expected):
            assert _same(info["action"], action), (info["action"], action)
            assert info["member"]
        # A sample of the batched action space steps them all again.
        vec.step(vec.batch_action_space.sample())
        assert vec.get_attr("t") == [2, 2, 2]


def test_send_steps_the_sub_envs_it_names_with_an_empty_tuple_action_space() -> None:
    with BACKENDS["proc-shared"](_recorders(Tuple(()), 3)) as vec:
        assert isinstance(vec, ProcVecEnv)
        vec.reset(seed=0)
        vec.send((), env_ids=[0, 2])
        received = vec.recv(batch_size=2)
        assert sorted(received.env_ids.tolist()) == [0, 2]
        assert vec.get_attr("t") == [1, 0, 1]
