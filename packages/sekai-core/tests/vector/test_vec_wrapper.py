"""VecWrapper base classes: delegation, observation/final_observation, reward and action."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import gymnasium
import numpy as np
import pytest

import sekai
from sekai._equal import structurally_equal
from sekai.vector import (
    ProcVecEnv,
    SyncVecEnv,
    VecActionWrapper,
    VecObservationWrapper,
    VecRewardWrapper,
    VecTransformReward,
    VecWrapper,
    vec_wrapper,
)
from sekai.vector._conformance import GOAL, CounterEnv, CounterVecEnv
from sekai.vector._contract.checks import observation_checker


class CrossSectionalDemean(VecObservationWrapper):
    """Subtract the cross-sub-env mean from each observation (the page's example)."""

    def observation(self, batch: Any) -> Any:
        return batch - batch.mean(axis=0, keepdims=True)

    def final_observation(self, obs: Any) -> Any:
        return obs


class Doubled(VecObservationWrapper):
    def observation(self, batch: Any) -> Any:
        return batch * 2


def test_vec_wrapper_delegates_state_and_repr_nests() -> None:
    inner = SyncVecEnv([CounterEnv] * 3)
    vec = Doubled(VecWrapper(inner))
    assert repr(vec) == "Doubled(VecWrapper(SyncVecEnv(num_envs=3)))"
    assert vec.num_envs == len(vec) == 3
    assert vec.unwrapped is inner
    assert vec.observation_space == inner.observation_space
    assert vec.batch_action_space == inner.batch_action_space
    assert vec.autoreset and not vec.frozen.any()
    vec.spec = "spec"  # type: ignore[assignment]
    assert inner.spec == "spec"
    assert vec.metadata is inner.metadata
    vec.close()
    assert inner.closed and vec.closed


_SINGLE_SEKAI_ENV = (
    "It is a single sekai env: wrap it with a single-env wrapper (those of sekai.wrappers), or "
    "build a VecEnv of such envs first, e.g. sekai.make_vec(env_id, num_envs) or "
    "sekai.SyncVecEnv([lambda: sekai.make(env_id)] * num_envs)."
)
_SINGLE_GYMNASIUM_ENV = (
    "It is a single gymnasium env: convert it with sekai.compat.from_gymnasium(env), then wrap "
    "it with a single-env wrapper, or build a VecEnv of such envs first, e.g. "
    "sekai.SyncVecEnv([lambda: sekai.compat.from_gymnasium(gymnasium.make(env_id))] * num_envs)."
)
_GYMNASIUM_VECTOR = (
    "To wrap a gymnasium vector env, convert it first with "
    "sekai.compat.from_gymnasium_vector(envs)."
)


@pytest.mark.parametrize(
    ("make", "got", "hint"),
    [
        (CounterEnv, "sekai.vector._conformance.CounterEnv", _SINGLE_SEKAI_ENV),
        # Both named TimeLimit: the full names tell sekai's from gymnasium's.
        (
            lambda: sekai.TimeLimit(CounterEnv(), 5),
            "sekai.wrappers.time_limit.TimeLimit",
            _SINGLE_SEKAI_ENV,
        ),
        (
            lambda: gymnasium.make("CartPole-v1"),
            "gymnasium.wrappers.common.TimeLimit",
            _SINGLE_GYMNASIUM_ENV,
        ),
        (
            lambda: gymnasium.make_vec("CartPole-v1", 2),
            "gymnasium.envs.classic_control.cartpole.CartPoleVectorEnv",
            _GYMNASIUM_VECTOR,
        ),
        (lambda: "CartPole-v1", "str", _GYMNASIUM_VECTOR),
    ],
    ids=["sekai-env", "sekai-wrapper", "gymnasium-env", "gymnasium-vector", "str"],
)
def test_vec_wrapper_given_something_else_says_what_it_is_and_what_to_do(
    make: Any, got: str, hint: str
) -> None:
    message = f"VecWrapper expected a sekai VecEnv, got {got}. {hint}"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        VecWrapper(make())


@pytest.mark.parametrize("name", ["observation_space", "action_space"])
def test_vec_wrapper_space_setters_refuse_what_is_not_a_sekai_space(name: str) -> None:
    vec = VecWrapper(SyncVecEnv([CounterEnv] * 2))
    with pytest.raises(TypeError, match=f"^VecWrapper: {name} must be a sekai.Space, got str.$"):
        setattr(vec, name, "Box(3)")
    gym_box = gymnasium.spaces.Box(-1.0, 1.0, (3,))
    hint = re.escape("got gymnasium.spaces.box.Box. Convert it with sekai.compat.space_from_")
    with pytest.raises(TypeError, match=hint):
        setattr(vec, name, gym_box)
    assert getattr(vec, name) is getattr(vec.venv, name)  # nothing was stored


@pytest.mark.parametrize("name", ["observation_space", "action_space"])
def test_vec_wrapper_space_set_to_none_is_the_inner_envs_again(name: str) -> None:
    vec = VecWrapper(SyncVecEnv([CounterEnv] * 2))
    setattr(vec, name, sekai.Discrete(7))
    assert getattr(vec, name) == sekai.Discrete(7)
    setattr(vec, name, None)  # as a single-env Wrapper: None is "the inner env's"
    assert getattr(vec, name) is getattr(vec.venv, name)


def test_vec_wrapper_delegates_attribute_access() -> None:
    vec = VecWrapper(SyncVecEnv([CounterEnv] * 2))
    vec.reset(options=[{"start": 1}, {"start": 2}])
    assert vec.get_attr("position") == [1, 2]
    vec.set_attr("position", [5, 6])
    assert vec.call("_obs")[1].tolist() == [6.0, 0.0, 1.0]


def test_vec_wrapper_reads_and_sets_the_native_envs_rng() -> None:
    inner = CounterVecEnv(2)
    vec = Doubled(VecWrapper(inner))
    generator = np.random.default_rng(5)
    vec.rng = generator
    assert inner.rng is generator and vec.rng is generator
    synced = VecWrapper(SyncVecEnv([CounterEnv] * 2))
    with pytest.raises(AttributeError, match="SyncVecEnv has no rng to set"):
        synced.rng = generator
    assert not hasattr(synced, "rng")


@pytest.mark.parametrize("name", ["send", "recv"])
def test_send_and_recv_through_a_wrapper_say_to_use_the_backend_or_step(name: str) -> None:
    with ProcVecEnv([CounterEnv] * 2, context="fork", num_workers=1) as inner:
        vec = Doubled(VecWrapper(inner))
        with pytest.raises(AttributeError) as info:
            getattr(vec, name)
        message = str(info.value)
        assert message.startswith(f"'Doubled' object has no attribute {name!r}: vector wrappers ")
        assert "do not forward send() and recv()" in message
        assert "on the backend, ProcVecEnv (vec.unwrapped)" in message and "step()" in message
        assert not hasattr(vec, name) and hasattr(vec.unwrapped, name)


def test_send_through_a_wrapper_of_a_backend_without_it_says_to_use_step() -> None:
    vec = Doubled(SyncVecEnv([CounterEnv] * 2))
    with pytest.raises(AttributeError, match="its backend, SyncVecEnv, has none either: use step"):
        vec.send(np.zeros(2, np.int64))


def test_cross_sectional_demean_example() -> None:
    vec = CrossSectionalDemean(SyncVecEnv([CounterEnv] * 4))
    result = vec.reset(options=[{"start": s} for s in (1, 2, 3, 6)])
    assert np.allclose(result.observations.mean(axis=0), 0.0)
    vec.close()


@pytest.mark.parametrize("native", [False, True])
def test_observation_wrapper_transforms_terminal_observations(native: bool) -> None:
    inner = CounterVecEnv(2) if native else SyncVecEnv([CounterEnv] * 2)
    vec = Doubled(inner)
    vec.reset(options=[{"start": GOAL - 1}, {"start": 0}])
    result = vec.step([1, 1])
    assert result.dones.tolist() == [True, False]
    final = result.infos[0]["final_observation"]
    assert final.tolist() == [2.0 * GOAL, 2.0, 2.0]
    assert result.observations[0].tolist() == [2.0 * 3, 0.0, 4.0]


def test_observation_wrapper_with_new_space_unbatches_final_observation() -> None:
    class Firsts(VecObservationWrapper):
        def __init__(self, venv: Any) -> None:
            super().__init__(venv)
            self.observation_space = sekai.Box(0.0, 1000.0, shape=(1,))

        def observation(self, batch: Any) -> Any:
            return batch[:, :1]

    vec = Firsts(SyncVecEnv([CounterEnv] * 2))
    assert vec.batch_observation_space.shape == (2, 1)
    vec.reset(options={"start": GOAL - 1})
    result = vec.step([1, 1])
    assert result.infos[1]["final_observation"].tolist() == [float(GOAL)]


# Transforms that change the observations' structure: the terminal observation is the row of
# the batch of one that observation() returns, whether or not the new space is declared.
BOX1, BOX3 = sekai.Box(-np.inf, np.inf, shape=(1,)), sekai.Box(-np.inf, np.inf, shape=(3,))
RESTRUCTURED: dict[str, tuple[Any, sekai.Space[Any], Any]] = {  # batch func, space, row func
    "dict": (
        lambda b: {"obs": b, "scaled": b * 2},
        sekai.Dict(obs=BOX3, scaled=BOX3),
        lambda o: {"obs": o, "scaled": o * 2},
    ),
    "tuple": (lambda b: (b, b[:, :1]), sekai.Tuple((BOX3, BOX1)), lambda o: (o, o[:1])),
    "fewer": (lambda b: b[:, :1], BOX1, lambda o: o[:1]),
}


@pytest.mark.parametrize("declared", [False, True], ids=["undeclared", "declared"])
@pytest.mark.parametrize("kind", list(RESTRUCTURED))
def test_a_restructuring_transforms_terminal_observation_is_its_row(
    kind: str, declared: bool
) -> None:
    func, space, row = RESTRUCTURED[kind]
    inner = SyncVecEnv([CounterEnv] * 2)
    with sekai.VecTransformObservation(inner, func, space if declared else None) as vec:
        vec.reset(options=[{"start": GOAL - 1}, {"start": 0}])
        result = vec.step([1, 1])
    final = result.infos[0]["final_observation"]
    expected = row(np.array([GOAL, 1.0, 1.0], dtype=np.float32))
    assert type(final) is type(expected)
    assert structurally_equal(final, expected)


def test_terminal_observations_reuse_the_check_of_the_observation_space_until_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[sekai.Space[Any]] = []
    checker = observation_checker

    def counted(space: sekai.Space[Any], num_envs: int | None = None) -> Any:
        built.append(space)
        return checker(space, num_envs)

    monkeypatch.setattr(vec_wrapper, "observation_checker", counted)
    vec = Doubled(SyncVecEnv([CounterEnv] * 2))
    terminal = np.array([GOAL, 1.0, 1.0], dtype=np.float32)
    rows = [vec.final_observation(terminal).tolist() for _ in range(3)]
    assert rows == [[2.0 * GOAL, 2.0, 2.0]] * 3 and built == [vec.observation_space]
    vec.observation_space = sekai.Box(-np.inf, np.inf, shape=(3,))
    assert vec.final_observation(terminal).tolist() == [2.0 * GOAL, 2.0, 2.0]
    assert built == [vec.venv.observation_space, vec.observation_space]


ROW_SPACES: dict[str, sekai.Space[Any]] = {
    "box": sekai.Box(-1.0, 1.0, shape=(2, 3)),
    "discrete": sekai.Discrete(4),
    "multi_binary": sekai.MultiBinary(3),
    "nested": sekai.Dict(
        a=sekai.Box(-1.0, 1.0, shape=(2,)),
        b=sekai.Tuple((sekai.Discrete(3), sekai.MultiDiscrete([2, 3]))),
        empty=sekai.Dict(),
    ),
    "masked": sekai.MaskedBox(-1.0, 1.0, shape=(2,), max_size=3),
}


@pytest.mark.parametrize("name", list(ROW_SPACES))
def test_the_terminal_row_of_a_batch_of_array_spaces_is_the_row_iterate_gives(name: str) -> None:
    space = ROW_SPACES[name]
    space.seed(0)
    observation = space.sample()

    class Env(sekai.Env[Any, Any]):
        observation_space = space
        action_space = sekai.Discrete(2)

        def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
            return sekai.ResetResult(observation)

        def step(self, action: Any) -> sekai.StepResult[Any]:
            return sekai.StepResult(observation, 0.0, True, False)

    batch = sekai.spaces.concatenate(space, [observation])
    expected = next(iter(sekai.spaces.iterate(sekai.spaces.batch_space(space, 1), batch)))
    with sekai.VecTransformObservation(SyncVecEnv([Env]), lambda batch: batch) as vec:
        row = vec.final_observation(observation)
    assert type(row) is type(expected) and structurally_equal(row, expected)
    assert structurally_equal(row, observation)


class Counting(sekai.Env[Any, Any]):
    """Observations (0,), (0,), (0, 1), (0, 1, 2): a Sequence; the episode ends at step 3."""

    observation_space = sekai.Sequence(sekai.Discrete(5), max_length=4)
    action_space = sekai.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.t = 0
        return sekai.ResetResult((0,), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        return sekai.StepResult(tuple(range(self.t)), 0.0, self.t >= 3, False, {})


def test_the_terminal_row_of_a_sequence_batch_is_the_row_iterate_gives() -> None:
    def plus_one(batch: Any) -> Any:
        return tuple(tuple(x + 1 for x in observation) for observation in batch)

    with sekai.VecTransformObservation(SyncVecEnv([Counting] * 2), plus_one) as vec:
        vec.reset(seed=0)
        for _ in range(3):
            result = vec.step([0, 0])
    assert result.dones.tolist() == [True, True]
    assert [info["final_observation"] for info in result.infos] == [(1, 2, 3), (1, 2, 3)]
    assert result.observations == ((1,), (1,))


class BoxAndSequence(sekai.Env[Any, Any]):
    """A Dict of a Box and a stacked Sequence of Boxes; step t shows t rows; ends at step 2."""

    observation_space = sekai.Dict(
        a=sekai.Box(0.0, 5.0, shape=(2,)),
        s=sekai.Sequence(sekai.Box(0.0, 5.0, shape=(2,)), max_length=3, stack=True),
    )
    action_space = sekai.Discrete(2)

    def _obs(self) -> dict[str, Any]:
        return {"a": np.full(2, self.t, np.float32), "s": np.ones((self.t, 2), np.float32)}

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.t = 0
        return sekai.ResetResult(self._obs(), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        return sekai.StepResult(self._obs(), 0.0, self.t >= 2, False, {})


def test_the_terminal_row_of_a_dict_with_a_sequence_next_to_a_box_keeps_every_key() -> None:
    with sekai.VecTransformObservation(SyncVecEnv([BoxAndSequence]), lambda b: b) as vec:
        vec.reset(seed=0)
        vec.step([0])
        result = vec.step([0])
    assert result.dones.tolist() == [True]
    final = result.infos[0]["final_observation"]
    assert list(final) == ["a", "s"]
    assert final["a"].tolist() == [2.0, 2.0]
    assert final["s"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert final in vec.observation_space


def test_a_transform_whose_terminal_output_has_no_row_names_the_wrapper_and_the_fix() -> None:
    inner = SyncVecEnv([CounterEnv] * 2)
    with sekai.VecTransformObservation(inner, lambda b: {"obs": b, "name": "counter"}) as vec:
        vec.reset(options={"start": GOAL - 1})
        message = (
            r"VecTransformObservation.observation\(\) returned a dict for a batch of one terminal "
            r"observation .* \(str 'counter' is not an array or list of length 1\)\. Declare "
            r"the space .*new_observation_space"
        )
        with pytest.raises(TypeError, match=message):
            vec.step([1, 1])


def test_reward_and_action_wrappers() -> None:
    class Halve(VecRewardWrapper):
        def reward(self, rewards: Any) -> Any:
            return rewards / 2

    class Flip(VecActionWrapper):
        def action(self, actions: Any) -> Any:
            return 2 - np.asarray(actions)

    vec = Halve(Flip(SyncVecEnv([CounterEnv] * 2)))
    vec.reset(seed=0)
    result = vec.step([0, 2])
    assert result.rewards.dtype == np.float64
    assert result.rewards.tolist() == [(1.0 - 0.1) / 2, (0.0 - 0.1) / 2]


def test_vec_action_wrapper_reverse_action_says_it_is_not_implemented() -> None:
    class Flip(VecActionWrapper):
        def action(self, actions: Any) -> Any:
            return 2 - np.asarray(actions)

    message = (
        "Flip does not implement reverse_action(). Implement it if you need to map env actions "
        "back to wrapper actions."
    )
    with pytest.raises(NotImplementedError, match=f"^{re.escape(message)}$"):
        Flip(SyncVecEnv([CounterEnv] * 2)).reverse_action(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize(
    ("fn", "shape"), [(lambda r: r[:1], "(1,)"), (lambda r: None, "()"), (lambda r: [r], "(1, 2)")]
)
def test_a_reward_wrapper_must_return_one_reward_per_sub_env(fn: Any, shape: str) -> None:
    vec = VecTransformReward(SyncVecEnv([CounterEnv] * 2), fn)
    vec.reset(seed=0)
    message = (
        "VecTransformReward.reward() must return one reward per sub-env, shape (2,), "
        f"got shape {shape}."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        vec.step([0, 2])


def test_wrapper_overriding_only_step_routes_async_step_through_it() -> None:
    class Tenfold(VecWrapper):
        def step(self, actions: Any) -> Any:
            result = self.venv.step(actions)
            return result._replace(rewards=10 * result.rewards)

    async def go() -> Any:
        vec = Tenfold(SyncVecEnv([CounterEnv]))
        await vec.async_reset(seed=0)
        return await vec.async_step([2])

    assert asyncio.run(go()).rewards.tolist() == [pytest.approx(9.0)]
