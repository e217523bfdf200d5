import copy
import dataclasses
import inspect
import pickle
import re
import typing
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from sekai import MAResetResult, MAStepResult, ResetResult, StepResult


def test_step_result_fields_are_positional_in_spec_order():
    r = StepResult(1, 2.0, True, False, {"k": 1})
    assert (r.observation, r.reward, r.terminated, r.truncated, r.info) == (
        1,
        2.0,
        True,
        False,
        {"k": 1},
    )


def test_results_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'reward'"):
        StepResult(0, 0.0, False, False, {}).reward = 1.0


@pytest.mark.parametrize(
    "build",
    [
        lambda: StepResult[np.ndarray](np.zeros(1), 1.0, False, False, {}),
        lambda: ResetResult[np.ndarray](np.zeros(1), {}),
        lambda: MAStepResult[int]({"a": 1}, {"a": 0.0}, {"a": False}, {"a": False}, {}),
        lambda: MAResetResult[int]({"a": 1}, {}),
    ],
)
def test_results_build_through_a_subscripted_alias(build):
    assert build().info == {}


def test_unknown_attributes_and_deletion_raise_frozen_instance_error():
    r = StepResult(0, 0.0, False, False, {})
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'extra'"):
        r.extra = 1
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'reward'"):
        del r.reward
    assert r.reward == 0.0


def test_results_are_not_iterable():
    with pytest.raises(TypeError, match="cannot unpack non-iterable StepResult object"):
        _obs, _r, _te, _tr, _info = StepResult(0, 0.0, False, False, {})
    with pytest.raises(TypeError, match="cannot unpack non-iterable ResetResult object"):
        _obs, _info = ResetResult(0, {})


@pytest.mark.parametrize(
    ("terminated", "truncated", "done"),
    [
        (False, False, False),
        (True, False, True),
        (False, True, True),
        (np.bool_(True), np.bool_(False), True),
    ],
)
def test_done_is_a_python_bool(terminated, truncated, done):
    value = StepResult(0, 0.0, terminated, truncated, {}).done
    assert value is done


@pytest.mark.parametrize(
    ("args", "name", "given"),
    [
        ((np.zeros(2), 1.0, False, {"lives": 3}), "truncated", "dict"),  # gym's order
        ((np.zeros(2), 1.0, True, {}), "truncated", "dict"),
        ((0, 0.0, {"t": 1}, False, {}), "terminated", "dict"),
        ((0, 0.0, False, [True], {}), "truncated", "list"),
        ((0, 0.0, ("a",), False, {}), "terminated", "tuple"),
        ((0, 0.0, False, "False", {}), "truncated", "str"),
    ],
)
def test_a_container_or_string_flag_is_refused_naming_the_field_order(args, name, given):
    # Before: gym's order built a result whose info sat in `truncated`, so it was done.
    gym = ", not gym's (obs, reward, done, info)" if given == "dict" else ""
    message = (
        f"StepResult's {name} must be a bool, got {given}: StepResult takes (observation, "
        f"reward, terminated, truncated, info){gym}."
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        StepResult(*args)
    bad = args[3] if name == "truncated" else args[2]
    with pytest.raises(TypeError, match=re.escape(message)):
        dataclasses.replace(StepResult(0, 0.0, False, False), **{name: bad})


@pytest.mark.parametrize(
    "flag", [np.bool_(True), 1, 0, np.int64(1), np.array(True), None], ids=repr
)
def test_flags_that_are_not_python_bools_still_build_a_result(flag):
    # check_env warns about them (core.md §7); a NumPy bool is what array code gives.
    assert StepResult(0, 0.0, flag, flag, {}).truncated is flag


@pytest.mark.parametrize(
    ("flag", "what"),
    [
        (np.array([True, False]), r"ndarray of several values, shape \(2,\)"),
        (np.zeros((2, 2), dtype=bool), r"ndarray of several values, shape \(2, 2\)"),
        (np.array([], dtype=bool), r"empty ndarray, shape \(0,\)"),
    ],
    ids=["two", "two-by-two", "empty"],
)
@pytest.mark.parametrize("name", ["terminated", "truncated"])
def test_an_array_flag_of_several_values_is_refused_after_one_element_arrays(name, flag, what):
    # A 1-element array counts as its element; accepting one must not let the next array of
    # several values through to an ambiguous truth value later.
    flags = {"terminated": False, "truncated": False}
    assert StepResult(0, 0.0, **{**flags, name: np.array([True])}).done
    message = rf"StepResult's {name} must be a bool \(or a 1-element array\), got an {what}"
    with pytest.raises(TypeError, match=message):
        StepResult(0, 0.0, **{**flags, name: flag})
    assert not StepResult(0, 0.0, **{**flags, name: np.array([[False]])}).done


def test_reset_result_is_never_done_and_info_defaults_to_a_fresh_dict():
    a, b = ResetResult(0), ResetResult(0)
    assert a.done is False
    assert a.info == {} and a.info is not b.info


def test_equality_compares_array_observations_without_raising():
    a = StepResult(np.array([1.0, np.nan]), 1.0, False, False, {})
    b = StepResult(np.array([1.0, np.nan]), 1.0, False, False, {})
    c = StepResult(np.array([1.0, 2.0]), 1.0, False, False, {})
    assert a == b
    assert a != c
    assert ResetResult({"x": np.zeros(2)}, {}) == ResetResult({"x": np.zeros(2)}, {})
    assert StepResult(0, 0.0, False, False, {}) != ResetResult(0, {})


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (np.array([1.0, 2.0]), np.array([1.0, None], dtype=object), False),
        (np.array([1.0, np.nan], dtype=object), np.array([1.0, np.nan]), True),
        (
            np.array([np.zeros(2), None], dtype=object),
            np.array([np.zeros(2), None], dtype=object),
            True,
        ),
        (np.array([1.0]), np.array(["a"]), False),
        (np.array(["a"]), np.array(["a"]), True),
        (np.array([np.nan], np.float32), np.array([np.nan]), True),
    ],
)
def test_equality_of_arrays_of_any_kind_does_not_raise(a, b, equal):
    assert (ResetResult(a) == ResetResult(b)) is equal


def test_repr_is_the_dataclass_repr():
    obs = np.array([0.0273956, -0.00611216], dtype=np.float32)
    assert repr(ResetResult(obs, {})) == (
        "ResetResult(observation=array([ 0.0273956 , -0.00611216], dtype=float32), info={})"
    )
    assert repr(StepResult(1, 1.0, False, False, {"elapsed_steps": 1})) == (
        "StepResult(observation=1, reward=1.0, terminated=False, truncated=False, "
        "info={'elapsed_steps': 1})"
    )


def test_dataclasses_replace_builds_a_new_result():
    r = StepResult(0, 1.0, False, False, {})
    assert dataclasses.replace(r, reward=5.0).reward == 5.0
    assert r.reward == 1.0


def test_results_pickle():
    r = StepResult(np.arange(3), 1.0, True, False, {"a": 1})
    assert pickle.loads(pickle.dumps(r)) == r


def test_results_use_slots():
    assert not hasattr(StepResult(0, 0.0, False, False, {}), "__dict__")


def test_ma_step_result_done_flags_as_the_spec_example():
    s = MAStepResult({}, {}, {"a": True, "b": False}, {"a": False, "b": False}, {})
    assert (s.all_done, s.any_done) == (False, True)
    assert MAStepResult({}, {}, {}, {}, {}).all_done is False


def test_ma_step_result_agents_missing_from_one_dict_count_as_not_done_there():
    s = MAStepResult({}, {}, {"a": True}, {"b": True}, {})
    assert (s.all_done, s.any_done) == (True, True)
    only_truncated = MAStepResult({}, {}, {"a": False}, {"b": True}, {})
    assert (only_truncated.all_done, only_truncated.any_done) == (False, True)


@pytest.mark.parametrize(
    ("args", "name", "given"),
    [
        (({"a": 1}, {"a": 1.0}, False, False, {}), "terminated", "bool"),  # single-agent habit
        (({"a": 1}, {"a": 1.0}, {"a": False}, None, {}), "truncated", "NoneType"),
        (({"a": 1}, 1.0, {"a": False}, {"a": False}, {}), "rewards", "float"),
        (({"a": 1}, [1.0], {"a": False}, {"a": False}), "rewards", "list"),
    ],
)
def test_ma_step_result_refuses_rewards_or_flags_that_are_not_agent_keyed(args, name, given):
    # Before: scalar flags built a result whose all_done raised a TypeError naming neither.
    message = (
        f"MAStepResult's {name} must be a dict keyed by agent, got {given}: MAStepResult takes "
        "(observations, rewards, terminated, truncated, info), each keyed by agent."
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        MAStepResult(*args)
    good = MAStepResult({"a": 1}, {"a": 0.0}, {"a": False}, {"a": False}, {})
    bad = dict(zip(("observations", "rewards", "terminated", "truncated"), args))[name]
    with pytest.raises(TypeError, match=re.escape(message)):
        dataclasses.replace(good, **{name: bad})


def test_ma_step_result_refuses_gyms_order_with_the_infos_in_truncated():
    # Before: MAStepResult(obs, rewards, dones, infos) built, and every agent with an info
    # counted as done.
    with pytest.raises(
        TypeError,
        match=re.escape(
            "MAStepResult's truncated must map agents to bools, got a dict for agent(s) "
            "['a', 'b']: MAStepResult takes (observations, rewards, terminated, truncated, "
            "info), not gym's (obs, rewards, dones, infos)."
        ),
    ):
        MAStepResult({"a": 1, "b": 1}, {"a": 0.0, "b": 0.0}, {"a": False}, {"a": {"x": 1}, "b": {}})


@pytest.mark.parametrize("flags", [{}, {"a": True}, {"a": np.bool_(False)}, {"a": 0}], ids=repr)
def test_ma_step_result_builds_from_agent_keyed_mappings_with_or_without_info(flags):
    from types import MappingProxyType

    four = MAStepResult({"a": 1}, {"a": 1.0}, flags, flags)
    assert four.truncated is flags and four.info == {}
    proxy = MappingProxyType(flags)
    assert MAStepResult({"a": 1}, proxy, proxy, proxy, {"a": {}}).rewards is proxy
    assert "info: 'dict[Any, Any]' = <factory>)" in str(inspect.signature(MAStepResult))


@pytest.mark.parametrize("mapping", [dict, OrderedDict], ids=lambda m: m.__name__)
def test_ma_step_result_with_an_info_does_not_guess_gyms_order_for_any_mapping(mapping):
    # Gym's order has four fields: with the fifth given, the flags are not read for infos,
    # whether the agent-keyed dicts are plain dicts or other mappings.
    truncated = {"a": {"x": 1}}
    built = MAStepResult({"a": 1}, mapping({"a": 1.0}), {"a": False}, truncated, {"a": {}})
    assert built.truncated is truncated


def test_ma_reset_result_is_never_done():
    r = MAResetResult({"a": 0})
    assert (r.all_done, r.any_done, r.info) == (False, False, {})


def test_results_build_from_keywords_and_keep_the_dataclass_signature():
    r = StepResult(observation=1, reward=2.0, terminated=False, truncated=True)
    assert (r.observation, r.reward, r.terminated, r.truncated, r.info) == (1, 2.0, False, True, {})
    assert StepResult(0, 0.0, False, False, None).info is None  # only a missing info is filled
    assert ResetResult(observation=0, info={"a": 1}).info == {"a": 1}
    # NumPy scalars are accepted for the reward and flags (check_env accepts them).
    assert str(inspect.signature(StepResult)).startswith(
        "(observation: 'ObsT', reward: 'float | np.floating[Any]', terminated: 'bool | np.bool_', "
        "truncated: 'bool | np.bool_', info: 'dict[str, Any]' = <factory>)"
    )
    hints = typing.get_type_hints(StepResult.__init__)
    assert hints["reward"] == float | np.floating[Any] and hints["truncated"] == bool | np.bool_
    assert str(inspect.signature(ResetResult)).startswith(
        "(observation: 'ObsT', info: 'dict[str, Any]' = <factory>)"
    )
    with pytest.raises(TypeError):
        StepResult(0, 0.0, False)
    copied = copy.copy(r)
    assert copied == r and copied is not r


def test_ma_step_result_without_info_refuses_gym_order_after_a_bool_flag() -> None:
    with pytest.raises(TypeError, match=r"truncated must map agents to bools.*\['b'\]"):
        MAStepResult(
            {"a": 0, "b": 0}, {"a": 1.0, "b": 1.0}, {"a": False, "b": False}, {"a": False, "b": {}}
        )  # type: ignore[dict-item]
    assert MAStepResult({"a": 0}, {"a": 1.0}, {"a": False}, {"a": np.bool_(False)}).truncated == {
        "a": np.bool_(False)
    }  # type: ignore[dict-item]
