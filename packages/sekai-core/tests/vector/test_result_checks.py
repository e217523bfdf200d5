"""What a sub-env returns is checked before it is batched, on every backend (issue 30).

A wrong observation, a reward that is not a number or a flag that is not a bool is an error
naming the sub-env; 1-element array rewards and flags give ``(N,)`` batches; a terminal
observation survives an env that writes its reset observation into the same buffer.
"""

from __future__ import annotations

import collections
import re
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv, VecEnv
from sekai.vector._contract.checks import batch_flags, batch_rewards
from sekai.wrappers.autoreset import AutoReset

BOX = sekai.Box(-1.0, 1.0, shape=(2,))
GOOD = np.zeros(2, dtype=np.float32)

Backend = Callable[[Sequence[Callable[[], sekai.Env]]], VecEnv]  # type: ignore[type-arg]

BACKENDS: dict[str, Backend] = {
    "sync": lambda fns: SyncVecEnv(fns),
    "async": lambda fns: AsyncVecEnv(fns),
    # fork: the sub-envs are classes of this test module, which workers could not import.
    "proc": lambda fns: ProcVecEnv(fns, num_workers=2, context="fork"),
}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param]


class Scripted(sekai.Env):  # type: ignore[type-arg]
    """An env over ``space`` whose step() returns exactly what it was given."""

    def __init__(
        self,
        space: sekai.Space[Any] = BOX,
        *,
        obs: Any = GOOD,
        reset_obs: Any = GOOD,
        reward: Any = 1.0,
        terminated: Any = False,
        truncated: Any = False,
    ) -> None:
        self.observation_space = space
        self.action_space = sekai.Discrete(2)
        self.obs, self.reset_obs, self.reward = obs, reset_obs, reward
        self.terminated, self.truncated = terminated, truncated

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(self.reset_obs, {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(self.obs, self.reward, self.terminated, self.truncated, {})


def _one_bad(**bad: Any) -> list[Callable[[], sekai.Env]]:  # type: ignore[type-arg]
    """Three sub-envs; sub-env 1 returns ``bad``."""
    return [Scripted, lambda: Scripted(**bad), Scripted]


@pytest.mark.parametrize(
    ("obs", "what"),
    [
        (0.5, r"shape \(\), the space's shape is \(2,\)"),
        (np.zeros(3, dtype=np.float32), r"shape \(3,\), the space's shape is \(2,\)"),
        (np.zeros((1, 2), dtype=np.float32), r"shape \(1, 2\), the space's shape is \(2,\)"),
        (None, r"a NoneType, not an array of shape \(2,\)"),
        (np.array(["a", "b"]), r"dtype <U1 \(kind 'U'\), the space's dtype kind is 'f'"),
    ],
    ids=["scalar", "too-long", "extra-axis", "none", "strings"],
)
def test_a_step_observation_that_does_not_fit_the_space_names_the_sub_env(
    backend: Backend, obs: Any, what: str
) -> None:
    with backend(_one_bad(obs=obs)) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"Sub-env 1 returned observation") as info:
            vec.step(np.array([0, 0, 0]))
        message = str(info.value)
        assert repr(BOX) in message
        assert re.search(what, message), message
        assert " from step(), which does not fit" in message
        # InvalidObservation is reserved (raised by nothing): a misfit is a plain ValueError
        assert not isinstance(info.value, sekai.InvalidObservation)


def test_a_reset_observation_that_does_not_fit_the_space_names_the_sub_env(
    backend: Backend,
) -> None:
    with (
        backend(_one_bad(reset_obs=np.zeros(3, dtype=np.float32))) as vec,
        pytest.raises(ValueError, match=r"Sub-env 1 returned observation") as info,
    ):
        vec.reset(seed=0)
    assert " from reset(), which does not fit" in str(info.value)


class BadAfterFirstReset(Scripted):
    """Ends every episode at its first step; only its first reset observation fits."""

    def __init__(self) -> None:
        super().__init__(terminated=True)
        self.resets = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.resets += 1
        return sekai.ResetResult(GOOD if self.resets == 1 else np.float32(0.0), {})


def test_the_observation_of_a_same_step_autoreset_is_checked(backend: Backend) -> None:
    with backend([Scripted, BadAfterFirstReset, Scripted]) as vec:
        vec.reset(seed=0)
        misfit = r"Sub-env 1 returned observation .*shape \(\)"
        with pytest.raises(ValueError, match=misfit) as info:
            vec.step(np.array([0, 0, 0]))
    # The misfit came from the autoreset's reset(), not from step(): the message says so.
    message = str(info.value)
    assert " from reset() (the same-step autoreset after step() ended its episode)" in message
    assert "from step()" not in message


def test_an_autoreset_wrapped_sub_env_s_reset_observation_is_named_as_a_reset(
    backend: Backend,
) -> None:
    # A sub-env that resets itself (AutoReset inside) hands on its reset observation too.
    with backend([Scripted, lambda: AutoReset(BadAfterFirstReset()), Scripted]) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"Sub-env 1 returned observation") as info:
            vec.step(np.array([0, 0, 0]))
    assert " from reset() (the same-step autoreset" in str(info.value)


def test_a_float_observation_of_an_integer_space_is_refused(backend: Backend) -> None:
    space = sekai.Discrete(4)
    fns = [
        lambda: Scripted(space, obs=1, reset_obs=0),
        lambda: Scripted(space, obs=1.5, reset_obs=0),
    ]
    with backend(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"Sub-env 1 .*dtype float64 \(kind 'f'\)"):
            vec.step(np.array([0, 0]))


def test_dict_observations_are_checked_part_by_part(backend: Backend) -> None:
    space = sekai.Dict({"a": sekai.Box(0.0, 1.0, shape=(2,)), "b": sekai.Discrete(3)})
    good = {"a": GOOD, "b": 1}
    bad = {"a": np.zeros(3, dtype=np.float32), "b": 1}
    fns = [
        lambda: Scripted(space, obs=good, reset_obs=good),
        lambda: Scripted(space, obs=bad, reset_obs=good),
    ]
    with backend(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"Sub-env 1 .*\['a'\]: shape \(3,\)"):
            vec.step(np.array([0, 0]))


def test_tuple_observations_of_another_length_are_refused(backend: Backend) -> None:
    space = sekai.Tuple((sekai.Box(0.0, 1.0, shape=(2,)), sekai.Discrete(3)))
    good = (GOOD, 1)
    fns = [
        lambda: Scripted(space, obs=good, reset_obs=good),
        lambda: Scripted(space, obs=(GOOD, 1, 2), reset_obs=good),
    ]
    with backend(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(
            ValueError, match=r"Sub-env 1 .*: a tuple of 3 parts, the space's tuple has 2\. "
        ):
            vec.step(np.array([0, 0]))


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        ({"values": np.zeros((2, 1), np.float32)}, r"mask"),
        (
            {"values": np.zeros((3, 1), np.float32), "mask": np.zeros(2, np.int8)},
            r"\['values'\]: shape \(3, 1\)",
        ),
    ],
    ids=["no-mask", "values-shape"],
)
def test_masked_box_observations_are_checked_as_the_dict_of_their_arrays(
    backend: Backend, bad: dict[str, Any], what: str
) -> None:
    # As the vector page says: a MaskedBox is checked as the Dict of its values and mask.
    space = sekai.MaskedBox(0.0, 1.0, shape=(1,), max_size=2)
    good = {"values": np.zeros((2, 1), np.float32), "mask": np.zeros(2, np.int8)}
    fns = [
        lambda: Scripted(space, obs=good, reset_obs=good),
        lambda: Scripted(space, obs=bad, reset_obs=good),
    ]
    with backend(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=rf"(?s)Sub-env 1 .*{what}"):
            vec.step(np.array([0, 0]))


@pytest.mark.parametrize(
    "reward", [None, "1.0", [1.0, 2.0], np.array([1.0, 2.0]), np.array([]), 1 + 2j], ids=repr
)
def test_a_reward_that_is_not_a_real_number_names_the_sub_env(
    backend: Backend, reward: Any
) -> None:
    with backend(_one_bad(reward=reward)) as vec:
        vec.reset(seed=0)
        with pytest.raises(
            TypeError, match=r"Sub-env 1 returned reward .* a reward must be a real number"
        ):
            vec.step(np.array([0, 0, 0]))


@pytest.mark.parametrize("flag", ["terminated", "truncated"])
def test_a_list_flag_is_refused_by_the_sub_envs_step_result(backend: Backend, flag: str) -> None:
    # StepResult refuses it where it is built (a list is never a flag), before any batching.
    with backend(_one_bad(**{flag: [True, False]})) as vec:
        vec.reset(seed=0)
        with pytest.raises(TypeError, match=rf"StepResult's {flag} must be a bool, got list"):
            vec.step(np.array([0, 0, 0]))


@pytest.mark.parametrize("flag", ["terminated", "truncated"])
def test_an_array_flag_of_several_values_is_refused_by_the_sub_envs_step_result(
    backend: Backend, flag: str
) -> None:
    # Not NumPy's "truth value of an array ... is ambiguous" from the autoreset's `if`.
    with backend(_one_bad(**{flag: np.array([True, False])})) as vec:
        vec.reset(seed=0)
        with pytest.raises(TypeError, match=rf"StepResult's {flag} .* ndarray of several values"):
            vec.step(np.array([0, 0, 0]))


def test_a_batch_holding_a_flag_of_several_values_names_the_sub_env() -> None:
    with pytest.raises(
        TypeError, match=r"Sub-env 1 returned truncated=.* several values, shape \(2,\)"
    ):
        batch_flags("truncated", [False, np.array([True, False]), False], 3)


def test_a_batch_holding_a_complex_reward_names_the_sub_env() -> None:
    # Not cast to float64, which would drop the imaginary part.
    with pytest.raises(TypeError, match=r"^Sub-env 1 returned reward \(1\+2j\) \(complex\)"):
        batch_rewards([1.0, 1 + 2j, 0.5], 3)


def test_one_element_array_rewards_and_flags_give_flat_batches(backend: Backend) -> None:
    """gymnasium#1445: such values used to give ``(N, 1)`` batches."""

    def make() -> sekai.Env:  # type: ignore[type-arg]
        return Scripted(
            reward=np.array([0.5], dtype=np.float32),
            terminated=np.array([False]),
            truncated=np.array([[True]]),
        )

    with backend([make] * 3) as vec:
        vec.reset(seed=0)
        result = vec.step(np.array([0, 0, 0]))
    assert result.rewards.shape == (3,) and result.rewards.dtype == np.float64
    assert result.rewards.tolist() == [0.5, 0.5, 0.5]
    assert result.terminated.shape == result.truncated.shape == (3,)
    assert result.terminated.dtype == result.truncated.dtype == np.bool_
    assert result.truncated.tolist() == [True, True, True]


def test_numpy_scalars_ints_and_bools_are_accepted_as_rewards_and_flags(backend: Backend) -> None:
    fns = [
        lambda: Scripted(reward=np.float32(0.25), terminated=np.bool_(False)),
        lambda: Scripted(reward=2, truncated=1),
        lambda: Scripted(reward=True, terminated=np.int64(0)),
        lambda: Scripted(reward=np.float64(-1.5), truncated=np.bool_(True)),
    ]
    with backend(fns) as vec:
        vec.reset(seed=0)
        result = vec.step(np.array([0, 0, 0, 0]))
    assert result.rewards.tolist() == [0.25, 2.0, 1.0, -1.5]
    assert result.terminated.tolist() == [False, False, False, False]
    assert result.truncated.tolist() == [False, True, False, True]


class OneBuffer(sekai.Env):  # type: ignore[type-arg]
    """Writes every observation into one array and returns it; episodes last two steps."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-10.0, 10.0, shape=(2,))
        self.action_space = sekai.Discrete(2)
        self.buffer = np.zeros(2, dtype=np.float32)
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.t = 0
        self.buffer[:] = -1.0
        return sekai.ResetResult(self.buffer, {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.t += 1
        self.buffer[:] = self.t
        return sekai.StepResult(self.buffer, 0.0, self.t == 2, False, {})


def test_final_observation_keeps_the_terminal_value_when_the_env_reuses_its_buffer(
    backend: Backend,
) -> None:
    """gymnasium#1132: the same-step reset used to overwrite ``final_observation``."""
    with backend([OneBuffer] * 2) as vec:
        vec.reset(seed=0)
        vec.step(np.array([0, 0]))
        result = vec.step(np.array([0, 0]))
    assert result.dones.tolist() == [True, True]
    assert result.observations.tolist() == [[-1.0, -1.0]] * 2
    for info in result.infos:
        assert info["final_observation"].tolist() == [2.0, 2.0]


def test_an_auto_reset_wrapped_sub_env_keeps_its_terminal_observation_too(
    backend: Backend,
) -> None:
    def make() -> sekai.Env:  # type: ignore[type-arg]
        return AutoReset(OneBuffer())

    with backend([make] * 2) as vec:
        vec.reset(seed=0)
        vec.step(np.array([0, 0]))
        result = vec.step(np.array([0, 0]))
    assert result.observations.tolist() == [[-1.0, -1.0]] * 2
    assert [info["final_observation"].tolist() for info in result.infos] == [[2.0, 2.0]] * 2


BYTES = sekai.Box(0, 255, shape=(2,), dtype=np.uint8)


def test_integer_observations_that_the_dtype_cannot_hold_name_the_sub_env(
    backend: Backend,
) -> None:
    fits = np.array([3, 1])  # int64 values a uint8 holds: cast, as before
    fns = [lambda: Scripted(BYTES, obs=fits, reset_obs=fits)] * 3
    fns[1] = lambda: Scripted(BYTES, obs=np.array([300, 1]), reset_obs=fits)
    with backend(fns) as vec:
        assert vec.reset(seed=0).observations.dtype == np.uint8
        with pytest.raises(ValueError, match=r"Sub-env 1 returned .*uint8"):
            vec.step(np.array([0, 0, 0]))


def test_a_python_int_that_the_dtype_cannot_hold_names_the_sub_env(backend: Backend) -> None:
    byte = sekai.Box(0, 255, shape=(), dtype=np.uint8)
    fns = [lambda: Scripted(byte, obs=3, reset_obs=3)] * 3
    fns[1] = lambda: Scripted(byte, obs=300, reset_obs=3)
    with backend(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"Sub-env 1 returned .*cannot hold"):
            vec.step(np.array([0, 0, 0]))


def test_python_ints_at_the_top_of_uint64_are_batched_exactly(backend: Backend) -> None:
    top = 2**64 - 1  # a float64 stack of Python ints would round it to 2**64
    space = sekai.Box(0, top, shape=(), dtype=np.uint64)
    fns = [
        lambda: Scripted(space, obs=top, reset_obs=top),
        lambda: Scripted(space, obs=1, reset_obs=1),
    ]
    with backend(fns) as vec:
        assert vec.reset(seed=0).observations.tolist() == [top, 1]


class Reporting(Scripted):
    """Counts its resets and steps; returns ``make_info()`` as the info of both (of reset()
    only, once ``make_reset_info`` is set), and ends its episode at every step when ``ends``
    (so each step autoresets)."""

    def __init__(self, make_info: Callable[[], Any] = dict, *, ends: bool = False) -> None:
        super().__init__(terminated=ends)
        self.make_info = make_info
        self.make_reset_info: Callable[[], Any] | None = None
        self.resets = self.steps = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.resets += 1
        return sekai.ResetResult(GOOD, (self.make_reset_info or self.make_info)())

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.steps += 1
        return sekai.StepResult(GOOD, 1.0, self.terminated, False, self.make_info())


MAPPINGS: dict[str, Callable[[], Any]] = {
    "defaultdict": lambda: collections.defaultdict(int, {"k": 1}),
    "OrderedDict": lambda: collections.OrderedDict(k=1),
    "mappingproxy": lambda: types.MappingProxyType({"k": 1}),
}


@pytest.mark.parametrize("ends", [False, True], ids=["step", "autoreset"])
@pytest.mark.parametrize("kind", list(MAPPINGS))
def test_a_mapping_info_becomes_a_plain_dict(backend: Backend, kind: str, ends: bool) -> None:
    def make() -> sekai.Env:  # type: ignore[type-arg]
        return Reporting(MAPPINGS[kind], ends=ends)

    with backend([make] * 2) as vec:
        infos = vec.reset(seed=0).infos
        assert [type(info) for info in infos] == [dict, dict]
        assert infos == [{"k": 1}, {"k": 1}]
        infos = vec.step(np.array([0, 0])).infos
    assert [type(info) for info in infos] == [dict, dict]
    assert [info["k"] for info in infos] == [1, 1]
    if ends:
        for info in infos:
            assert type(info["final_info"]) is dict and info["final_info"] == {"k": 1}
            assert type(info["reset_info"]) is dict and info["reset_info"] == {"k": 1}


NOT_MAPPINGS = {
    "None": (None, r"None \(NoneType\)"),
    "list": ([("k", 1)], r"\[\('k', 1\)\] \(list\)"),
}


def _bad_infos(info: Any, ends: bool = False) -> list[Callable[[], sekai.Env]]:  # type: ignore[type-arg]
    """Three sub-envs: 1 and 2 return infos that are no Mapping (1 ``info``, 2 a float)."""
    return [
        lambda: Reporting(ends=ends),
        lambda: Reporting(lambda: info, ends=ends),
        lambda: Reporting(lambda: 3.5, ends=ends),
    ]


@pytest.mark.parametrize("kind", list(NOT_MAPPINGS))
def test_a_reset_info_that_is_not_a_mapping_names_the_sub_env_after_the_others_reset(
    backend: Backend, kind: str
) -> None:
    info, shown = NOT_MAPPINGS[kind]
    with backend(_bad_infos(info)) as vec:
        with pytest.raises(
            TypeError,
            match=rf"Sub-env 1 returned info {shown} from reset\(\); an info must be a dict",
        ):
            vec.reset(seed=0)
        assert vec.get_attr("resets") == [1, 1, 1]  # every sub-env was reset (rule 9)


@pytest.mark.parametrize("kind", list(NOT_MAPPINGS))
def test_a_step_info_that_is_not_a_mapping_names_the_sub_env_after_the_others_stepped(
    backend: Backend, kind: str
) -> None:
    info, shown = NOT_MAPPINGS[kind]
    with backend(_bad_infos(info)) as vec:
        vec.set_attr("make_info", dict)
        vec.reset(seed=0)
        vec.set_attr("make_info", [dict, lambda: info, lambda: 3.5])
        with pytest.raises(
            TypeError, match=rf"Sub-env 1 returned info {shown} from step\(\); an info must"
        ):
            vec.step(np.array([0, 0, 0]))
        assert vec.get_attr("steps") == [1, 1, 1]  # every sub-env stepped (rule 9)


@pytest.mark.parametrize("kind", list(NOT_MAPPINGS))
def test_an_autoreset_info_that_is_not_a_mapping_names_the_sub_env(
    backend: Backend, kind: str
) -> None:
    info, shown = NOT_MAPPINGS[kind]
    with backend(_bad_infos(info, ends=True)) as vec:
        vec.set_attr("make_info", dict)
        vec.reset(seed=0)
        vec.set_attr("make_reset_info", [dict, lambda: info, lambda: 3.5])
        with pytest.raises(
            TypeError, match=rf"Sub-env 1 returned info {shown} from reset\(\); an info must"
        ):
            vec.step(np.array([0, 0, 0]))
        assert vec.get_attr("resets") == [2, 2, 2]  # every sub-env stepped and reset (rule 9)


class Misreturning(Reporting):
    """Returns what ``wrong`` (a name of ``WRONG``) gives from step() (or from reset(), with
    ``on_reset``) once ``wrong`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.wrong: str | None = None
        self.on_reset = False

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        result = super().reset(seed=seed, options=options)
        return WRONG[self.wrong](self) if self.wrong and self.on_reset else result

    def step(self, action: Any) -> Any:
        result = super().step(action)
        return WRONG[self.wrong](self) if self.wrong and not self.on_reset else result


async def _a_result() -> sekai.StepResult[Any]:
    return sekai.StepResult(GOOD, 1.0, False, False, {})


WRONG: dict[str, Callable[[Misreturning], Any]] = {
    "gym-step": lambda env: (GOOD, 1.0, False, False, {}),
    "gym-reset": lambda env: (GOOD, {}),
    "None": lambda env: None,
    "coroutine": lambda env: _a_result(),
    "int": lambda env: 7,
}


@pytest.mark.parametrize(
    ("wrong", "on_reset", "message"),
    [
        (
            "gym-step",
            False,
            r"Sub-env 1 returned a tuple from step\(\), not a sekai.StepResult: return "
            r"sekai.StepResult\(obs, reward, terminated, truncated, info\) instead of "
            r"gymnasium's tuple \(obs, reward, terminated, truncated, info\).",
        ),
        (
            "gym-reset",
            True,
            r"Sub-env 1 returned a tuple from reset\(\), not a sekai.ResetResult: return "
            r"sekai.ResetResult\(obs, info\) instead of gymnasium's tuple \(obs, info\).",
        ),
        (
            "None",
            False,
            r"Sub-env 1 returned None from step\(\), not a sekai.StepResult \(is a return "
            r"statement missing\?\).",
        ),
        (
            "coroutine",
            False,
            r"Sub-env 1 returned a coroutine from step\(\), not a sekai.StepResult: step\(\) "
            r"must be a plain def; async code goes in async_step\(\).",
        ),
        ("int", True, r"Sub-env 1 returned 7 \(an int\) from reset\(\), not a sekai.ResetResult."),
    ],
    ids=["gym-step", "gym-reset", "None", "coroutine", "int"],
)
def test_a_result_of_the_wrong_type_names_the_sub_env_after_the_others_ran(
    backend: Backend, wrong: str, on_reset: bool, message: str
) -> None:
    with backend([Misreturning] * 3) as vec:
        vec.reset(seed=0)
        vec.set_attr("on_reset", on_reset)
        vec.set_attr("wrong", [None, wrong, "int"])  # sub-env 1 is reported, the lowest
        with pytest.raises(TypeError, match=message):
            if on_reset:
                vec.reset(seed=0)
            else:
                vec.step(np.array([0, 0, 0]))
        # Every sub-env ran the call (rule 9).
        assert vec.get_attr("resets" if on_reset else "steps") == [2 if on_reset else 1] * 3
