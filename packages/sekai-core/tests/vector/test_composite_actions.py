"""Composite and integer spaces on SyncVecEnv, AsyncVecEnv and ProcVecEnv (shared memory on and
off): every sub-env gets the action a single env gets, and a frozen sub-env's repeated final
observation is the caller's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai._equal import structurally_equal
from sekai.spaces import Box, Dict, Discrete, Sequence, Space, Tuple
from sekai.vector import AsyncVecEnv, NativeVecEnv, ProcVecEnv, SyncVecEnv, VecEnv
from sekai.vector._contract.subenv import SubEnv

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


def test_bool_actions_for_an_integer_box_reach_sub_envs_as_its_members(backend: str) -> None:
    space = Box(0, 1, (3,), np.int8)  # three on/off switches
    actions = np.array([[True, False, True], [False, False, True]])
    with BACKENDS[backend](_recorders(space, 2)) as vec:
        vec.reset(seed=0)
        infos = vec.step(actions).infos
    for info, row in zip(infos, actions):
        assert info["member"]
        assert info["action"].dtype == np.int8
        np.testing.assert_array_equal(info["action"], row.astype(np.int8))


def test_bool_actions_for_a_float_box_still_reach_sub_envs_as_float64(backend: str) -> None:
    with BACKENDS[backend](_recorders(Box(0.0, 1.0, (2,)), 2)) as vec:
        vec.reset(seed=0)
        infos = vec.step(np.array([[True, False], [False, True]])).infos
    assert [info["action"].dtype for info in infos] == [np.float64, np.float64]
    np.testing.assert_array_equal(infos[1]["action"], [0.0, 1.0])


class Orders(sekai.Env[Any, Any]):
    """Observes a Sequence of Box rows; every episode lasts one step."""

    def __init__(self, stack: bool = False) -> None:
        self.observation_space = Sequence(Box(-10.0, 10.0, (2,)), max_length=3, stack=stack)
        self.action_space = Discrete(2)
        self.stack = stack

    def _obs(self, *values: float) -> Any:
        rows = (np.array(values, np.float32),)
        return np.stack(rows) if self.stack else rows

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        return sekai.ResetResult(self._obs(1.0, 2.0), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(self._obs(3.0, 4.0), 0.0, True, False, {})


@pytest.mark.parametrize("stack", [False, True], ids=["rows", "stacked"])
def test_a_frozen_sub_envs_sequence_observation_is_a_new_copy_every_step(
    backend: str, stack: bool
) -> None:
    with BACKENDS[backend]([lambda: Orders(stack)] * 2, autoreset=False) as vec:
        vec.reset(seed=0)
        first = vec.step(np.array([0, 0]))  # both finish and freeze
        first.observations[0][0][:] -= 100.0  # the caller edits its own batch in place
        second = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(second.observations[0][0], [3.0, 4.0])
        second.observations[1][0][:] = 0.0
        third = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(third.observations[1][0], [3.0, 4.0])
        assert third.observations[0][0] is not second.observations[0][0]


class OrdersVecEnv(NativeVecEnv):
    """The native twin of Orders."""

    def __init__(self, stack: bool) -> None:
        space = Sequence(Box(-10.0, 10.0, (2,)), max_length=3, stack=stack)
        super().__init__(2, space, Discrete(2), autoreset=False)
        self.stack = stack
        self.value = 1.0

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.value = 1.0

    def _observe(self) -> Any:
        rows = (np.array([self.value, self.value + 1.0], np.float32),)
        return tuple(np.stack(rows) if self.stack else rows for _ in range(self.num_envs))

    def _step(self, actions: Any) -> Any:
        self.value = 3.0
        return np.zeros(2), np.ones(2, bool), np.zeros(2, bool), {}


@pytest.mark.parametrize("stack", [False, True], ids=["rows", "stacked"])
def test_a_frozen_native_sub_envs_sequence_observation_is_a_new_copy_every_step(
    stack: bool,
) -> None:
    with OrdersVecEnv(stack) as vec:
        vec.reset(seed=0)
        first = vec.step(np.array([0, 0]))
        first.observations[0][0][:] -= 100.0
        second = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(second.observations[0][0], [3.0, 4.0])
        second.observations[1][0][:] = 0.0
        third = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(third.observations[1][0], [3.0, 4.0])
        assert third.observations[0][0] is not second.observations[0][0]


class Frames(sekai.Env[Any, Any]):
    """Observes a Dict of arrays, the env's own buffers; every episode lasts one step."""

    def __init__(self) -> None:
        self.observation_space = Dict(frame=Box(0, 255, (2, 2), np.uint8), step=Discrete(5))
        self.action_space = Discrete(2)
        self.frame = np.zeros((2, 2), np.uint8)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self._set_rng(seed)
        self.frame[:] = 1
        return sekai.ResetResult({"frame": self.frame, "step": 0}, {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.frame[:] = 7
        return sekai.StepResult({"frame": self.frame, "step": 1}, 0.0, True, False, {})


def test_a_frozen_sub_envs_array_observation_is_stacked_anew_every_step(backend: str) -> None:
    with BACKENDS[backend]([Frames] * 2, autoreset=False) as vec:
        vec.reset(seed=0)
        first = vec.step(np.array([0, 0]))  # both finish and freeze
        first.observations["frame"][:] = 0  # the caller edits its own batch in place
        second = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(second.observations["frame"], np.full((2, 2, 2), 7))
        second.observations["frame"][1] = 0
        third = vec.step(np.array([0, 0]))
        np.testing.assert_array_equal(third.observations["frame"], np.full((2, 2, 2), 7))
        np.testing.assert_array_equal(third.observations["step"], [1, 1])


@pytest.mark.parametrize("make", [Frames, lambda: Orders(False)], ids=["dict", "sequence"])
def test_a_frozen_sub_env_repeats_a_copy_of_its_final_observation(
    make: Callable[[], sekai.Env[Any, Any]],
) -> None:
    # A copy taken as the episode ended (the env may write into the buffers it returned); the
    # batch of every step copies it again (stacked, snapshot for a Sequence's, or pickled).
    sub = SubEnv(make(), autoreset=False, index=0)
    sub.reset(seed=0)
    ended = sub.step(0)
    frozen = [sub.step(0).observation for _ in range(2)]
    assert all(observation is not ended.observation for observation in frozen)
    assert all(structurally_equal(observation, ended.observation) for observation in frozen)
