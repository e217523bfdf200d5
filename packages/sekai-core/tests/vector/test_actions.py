"""Batched action checks before dispatch (core.md §14 rule 2)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Sequence, Space, Tuple
from sekai.vector._contract.actions import ActionChecker


def test_discrete_batch_of_wrong_length_raises_value_error_naming_shapes() -> None:
    checker = ActionChecker(Discrete(2), 4)
    with pytest.raises(ValueError, match=r"shape \(4,\).*got shape \(3,\)"):
        checker.check(np.array([0, 1, 0]))


@pytest.mark.parametrize(
    ("batch", "given"),
    [
        (None, "None"),
        ("ab", "str 'ab'"),
        ({"a": 1}, "dict of length 1"),
        (1.0, "float 1.0"),
        (np.int8(3), "int8 3"),
        (object(), "object"),
    ],
)
@pytest.mark.parametrize("space", [Discrete(2), Box(-1.0, 1.0, (2,))], ids=repr)
def test_a_batch_that_is_no_array_is_named_in_the_shape_error(
    batch: Any, given: str, space: Space[Any]
) -> None:
    shape = (2, *space.shape)
    message = f"actions must have shape {shape} (2 sub-envs, action space {space!r}), got {given}."
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ActionChecker(space, 2).check(batch)


class _Tensor:
    """An array-like that is no ndarray, list or tuple, as a torch tensor is."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.array

    def __len__(self) -> int:
        return len(self.array)


@pytest.mark.parametrize(
    "batch",
    [
        _Tensor(np.zeros((4, 1), dtype=np.int64)),
        memoryview(np.zeros((4, 1))),
        np.zeros((4, 1), dtype=object),
    ],
)
def test_an_array_like_of_the_wrong_shape_is_named_by_its_shape(batch: Any) -> None:
    # Its length is the number of sub-envs: the shape is what tells the extra axis.
    message = (
        "actions must have shape (4,) (4 sub-envs, action space Discrete(2)), got shape (4, 1)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ActionChecker(Discrete(2), 4).check(batch)


def test_a_batch_that_is_no_array_gets_the_same_message_on_every_backend() -> None:
    from sekai.testing.envs import Drift, DriftVecEnv
    from sekai.vector import AsyncVecEnv, SyncVecEnv

    message = "actions must have shape (2,) (2 sub-envs, action space Discrete(2)), got None."
    for vec in (SyncVecEnv([Drift, Drift]), AsyncVecEnv([Drift, Drift]), DriftVecEnv(2)):
        with vec:
            vec.reset(seed=0)
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                vec.step(None)


def test_a_dict_or_tuple_space_names_a_batch_that_is_none() -> None:
    with pytest.raises(ValueError, match=r"dict of batches .*, got None\.$"):
        ActionChecker(Dict(a=Discrete(2)), 2).check(None)
    with pytest.raises(ValueError, match=r"tuple of 1 batches .*, got str 'ab'\.$"):
        ActionChecker(Tuple((Discrete(2),)), 2).check("ab")


def test_discrete_value_out_of_range_raises_invalid_action_naming_the_sub_env() -> None:
    checker = ActionChecker(Discrete(5), 3)
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check(np.array([0, 7, 9]))
    assert info.value.index == 1
    assert info.value.action == 7
    assert str(info.value) == "Action 7 is not valid for space Discrete(5) (sub-env 1)."


def test_discrete_with_start_checks_both_ends() -> None:
    checker = ActionChecker(Discrete(3, start=-1), 2)
    checker.check([-1, 1])
    with pytest.raises(sekai.InvalidAction):
        checker.check([-2, 0])
    with pytest.raises(sekai.InvalidAction):
        checker.check(np.array([0, 2], dtype=np.uint8))


def test_discrete_float_array_of_integral_values_is_accepted_as_ints() -> None:
    batch = ActionChecker(Discrete(3), 2).check(np.array([1.0, 2.0]))
    assert batch.dtype == np.int64 and batch.tolist() == [1, 2]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int8, np.int32])
@pytest.mark.parametrize("space", [Discrete(3), MultiDiscrete([3, 3])], ids=repr)
def test_other_integer_dtypes_become_the_spaces(dtype: type, space: sekai.Space) -> None:
    # a native env computing ``actions - 1`` must not see uint8 wrap around to 255
    batch = ActionChecker(space, 2).check(np.zeros((2, *space.shape), dtype=dtype))
    assert batch.dtype == space.dtype and (batch - 1 == -1).all()


@pytest.mark.parametrize("bad", [1.5, np.nan, np.inf])
def test_discrete_non_integral_float_raises_invalid_action(bad: float) -> None:
    with pytest.raises(sekai.InvalidAction):
        ActionChecker(Discrete(3), 2).check(np.array([1.0, bad]))


def test_discrete_bool_actions_raise_invalid_action() -> None:
    with pytest.raises(sekai.InvalidAction):
        ActionChecker(Discrete(2), 2).check(np.array([True, False]))


def test_discrete_list_batch_splits_into_python_ints() -> None:
    checker = ActionChecker(Discrete(2), 4)
    per_env = checker.split(checker.check([0, 1, 0, 1]))
    assert per_env == [0, 1, 0, 1] and all(type(a) is int for a in per_env)


def test_frozen_sub_envs_actions_are_not_checked() -> None:
    checker = ActionChecker(Discrete(2), 3)
    batch = checker.check(np.array([0.0, np.nan, 1.0]), frozen=np.array([False, True, False]))
    assert batch.dtype == np.int64
    assert batch[[0, 2]].tolist() == [0, 1]
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check(np.array([5, 9, 1]), frozen=np.array([False, True, False]))
    assert info.value.index == 0


def test_multi_discrete_checks_every_entry_against_its_range() -> None:
    checker = ActionChecker(MultiDiscrete([2, 3]), 2)
    checker.check([[1, 2], [0, 0]])
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check([[1, 2], [2, 0]])
    assert info.value.index == 1
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        checker.check([[1, 2, 0], [0, 0, 0]])


def test_multi_binary_accepts_zeros_and_ones_only() -> None:
    checker = ActionChecker(MultiBinary(3), 2)
    checker.check(np.array([[0, 1, 1], [1, 0, 0]]))
    checker.check(np.array([[True, False, True], [False, False, False]]))
    with pytest.raises(sekai.InvalidAction):
        checker.check(np.array([[0, 2, 1], [1, 0, 0]]))


def test_multi_binary_float_batch_takes_integral_zeros_and_ones_only() -> None:
    checker = ActionChecker(MultiBinary(2), 2)
    batch = checker.check(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert batch.dtype == np.int8 and batch.tolist() == [[1, 0], [0, 1]]
    # a fraction in range is refused, not truncated to 0
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check(np.array([[0.5, 1.0], [1.0, 0.0]]))
    assert info.value.index == 0
    assert str(info.value) == (
        "Action array([0.5, 1. ]) is not valid for space MultiBinary(2) (sub-env 0)."
    )


def test_box_non_finite_raises_but_finite_out_of_bounds_passes() -> None:
    checker = ActionChecker(Box(-1.0, 1.0, shape=(2,)), 2)
    batch = checker.check(np.array([[5.0, -9.0], [0.0, 0.0]]))
    assert batch[0].tolist() == [5.0, -9.0]  # the env clips it
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check(np.array([[0.0, 0.0], [np.nan, 0.0]]))
    assert info.value.index == 1


@pytest.mark.parametrize(
    ("space", "dtype"),
    [
        (Box(-1.0, 1.0, shape=(1,)), np.float64),
        (Box(-1.0, 1.0, shape=(1,), dtype=np.float16), np.float64),
        (Box(0, 5, (1,), np.int64), np.int64),
        (Box(0, 1, (1,), np.uint8), np.uint8),
    ],
)
def test_box_bool_actions_are_the_numbers_1_and_0(space: Box, dtype: type) -> None:
    checker = ActionChecker(space, 3)
    actions = np.array([[True], [False], [True]])
    assert all(row in space for row in actions)  # as Box.contains says
    batch = checker.check(actions)
    # An integer Box's own integers, which are members as the bools are; float64 otherwise.
    assert batch.dtype == dtype and batch.tolist() == [[1], [0], [1]]
    assert all(row in space for row in batch)


@pytest.mark.parametrize(
    ("space", "actions", "index", "given"),
    [
        (Discrete(2), [0, 1, "1"], 2, "1"),
        (Discrete(2), [0, 1, "x"], 2, "x"),
        (Discrete(2), [0, 1, None], 2, None),
        (Discrete(2), [0, "1", 1], 1, "1"),
        (Discrete(2), [0, 1, 2**70], 2, 2**70),
        (MultiDiscrete([3, 2]), [[0, 1], [2, "1"]], 1, [2, "1"]),
        (MultiBinary(2), [[0, 1], [True, None]], 1, [True, None]),
        (Box(-2.0, 2.0, shape=(1,)), [[0.1], [0.2], ["x"]], 2, ["x"]),
        (Box(-2.0, 2.0, shape=(1,)), [[0.1], [0.2], [None]], 2, [None]),
        (Box(-2.0, 2.0, shape=(1,)), [[0.1], [1j], [0.2]], 1, [1j]),
    ],
    ids=repr,
)
def test_a_non_number_among_numbers_names_its_sub_env_and_the_action_given(
    space: Space[Any], actions: list[Any], index: int, given: Any
) -> None:
    checker = ActionChecker(space, len(actions))
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check(actions)
    assert info.value.index == index
    assert info.value.action == given
    assert str(info.value) == (
        f"Action {given!r} is not valid for space {space!r} (sub-env {index})."
    )


def test_a_frozen_sub_env_with_a_non_number_lets_the_others_step_with_numbers() -> None:
    frozen = np.array([False, False, True])
    batch = ActionChecker(Discrete(2), 3).check([0, 1, "x"], frozen=frozen)
    assert batch.dtype == np.int64 and batch[:2].tolist() == [0, 1]
    boxed = ActionChecker(Box(-2.0, 2.0, shape=(1,)), 3).check([[0.1], [0.2], [None]], frozen)
    assert boxed.dtype == np.float64 and boxed[:2].tolist() == [[0.1], [0.2]]


def test_box_float_batch_is_returned_unchanged_when_finite() -> None:
    checker = ActionChecker(Box(-1.0, 1.0, shape=(2,)), 2)
    batch = np.array([[0.5, -0.5], [1.0, 0.0]], dtype=np.float32)
    assert checker.check(batch) is batch


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_box_non_finite_entry_in_a_float32_batch_names_its_sub_env(bad: float) -> None:
    batch = np.zeros((4, 3), dtype=np.float32)
    batch[2, 1] = bad
    with pytest.raises(sekai.InvalidAction) as info:
        ActionChecker(Box(-1.0, 1.0, shape=(3,)), 4).check(batch)
    assert info.value.index == 2


def test_box_opposite_infinities_do_not_cancel() -> None:
    batch = np.array([[np.inf, -np.inf], [0.0, 0.0]])
    with pytest.raises(sekai.InvalidAction) as info:
        ActionChecker(Box(-1.0, 1.0, shape=(2,)), 2).check(batch)
    assert info.value.index == 0


def test_box_non_finite_action_of_a_frozen_sub_env_is_not_checked() -> None:
    checker = ActionChecker(Box(-1.0, 1.0, shape=(2,)), 3)
    batch = np.array([[0.0, 0.0], [np.nan, np.inf], [0.5, 0.5]])
    checked = checker.check(batch, frozen=np.array([False, True, False]))
    assert checked[[0, 2]].tolist() == [[0.0, 0.0], [0.5, 0.5]]


def test_box_per_env_shape_mismatch_raises_value_error() -> None:
    with pytest.raises(ValueError, match=r"shape \(3, 2\).*got shape \(3, 1\)"):
        ActionChecker(Box(-1.0, 1.0, shape=(2,)), 3).check(np.zeros((3, 1)))


def test_box_split_gives_one_row_per_sub_env() -> None:
    checker = ActionChecker(Box(-1.0, 1.0, shape=(2,)), 2)
    rows = checker.split(checker.check(np.array([[0.1, 0.2], [0.3, 0.4]])))
    assert [r.tolist() for r in rows] == [[0.1, 0.2], [0.3, 0.4]]


def test_ragged_list_raises_value_error() -> None:
    with pytest.raises(ValueError):
        ActionChecker(Box(-1.0, 1.0, shape=(2,)), 2).check([[0.0, 0.0], [0.0]])


def test_dict_batch_must_have_exactly_the_space_keys() -> None:
    checker = ActionChecker(Dict(a=Discrete(2), b=Box(-1.0, 1.0, shape=(1,))), 2)
    with pytest.raises(ValueError, match="keys"):
        checker.check({"a": np.zeros(2, int)})
    with pytest.raises(ValueError, match=r"actions\['b'\].*\(2, 1\)"):
        checker.check({"a": np.zeros(2, int), "b": np.zeros((3, 1))})


def test_dict_batch_value_error_names_sub_env_and_splits_per_env() -> None:
    space = Dict(a=Discrete(2), b=Box(-1.0, 1.0, shape=(1,)))
    checker = ActionChecker(space, 2)
    with pytest.raises(sekai.InvalidAction) as info:
        checker.check({"a": np.array([0, 3]), "b": np.zeros((2, 1))})
    assert info.value.index == 1 and info.value.action["a"] == 3
    per_env = checker.split(checker.check([{"a": 1, "b": [0.5]}, {"a": 0, "b": [0.0]}]))
    assert per_env[0]["a"] == 1 and per_env[0]["b"].tolist() == [0.5]


@pytest.mark.parametrize("count", [1, 3])
def test_a_list_of_dicts_or_tuples_of_another_length_names_its_length(count: int) -> None:
    # the message said "got list" without the length that was wrong
    dicts = ActionChecker(Dict(a=Discrete(2)), 2)
    with pytest.raises(
        ValueError, match=rf"or a list of 2 dicts\) .* got list of length {count}\.$"
    ):
        dicts.check([{"a": 0}] * count)
    tuples = ActionChecker(Tuple([Discrete(2), Discrete(3)]), 2)
    with pytest.raises(
        ValueError, match=rf"or a list of 2 tuples\) .* got tuple of length {count}"
    ):
        tuples.check(tuple([np.zeros(2, int)] * count))


def test_tuple_batch_and_list_of_tuples_are_both_accepted() -> None:
    checker = ActionChecker(Tuple([Discrete(2), Discrete(3)]), 2)
    from_batches = checker.split(checker.check((np.array([0, 1]), np.array([2, 0]))))
    from_list = checker.split(checker.check([(0, 2), (1, 0)]))
    assert from_batches == from_list == [(0, 2), (1, 0)]
    with pytest.raises(ValueError):
        checker.check([(0, 2)])


def test_a_per_env_tuple_with_another_number_of_parts_is_a_value_error() -> None:
    checker = ActionChecker(Tuple([Discrete(3), Box(-1.0, 1.0, shape=(2,))]), 3)
    text = "every per-env action in actions must be a tuple of 2 parts."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        checker.check([(0, np.zeros(2)), (1,), (2, np.zeros(2))])


@pytest.mark.parametrize(("discrete", "box"), [(2, 1), (1, 2)], ids=["box-first", "discrete-first"])
def test_bad_values_in_two_parts_of_a_tuple_name_the_first_bad_sub_env(
    discrete: int, box: int
) -> None:
    space = Tuple([Discrete(3), Box(-1.0, 1.0, shape=(2,))])
    ints, floats = np.zeros(3, dtype=int), np.zeros((3, 2))
    ints[discrete], floats[box] = 7, np.nan
    with pytest.raises(sekai.InvalidAction) as info:
        ActionChecker(space, 3).check((ints, floats))
    first = min(discrete, box)
    assert info.value.index == first
    assert str(info.value).endswith(f" is not valid for space {space!r} (sub-env {first}).")
    part, row = info.value.action
    assert part == ints[first] and np.array_equal(row, floats[first], equal_nan=True)


def test_a_list_of_dicts_whose_keys_differ_names_the_first_odd_one() -> None:
    checker = ActionChecker(Dict(a=Discrete(2), b=Box(-1.0, 1.0, shape=(1,))), 2)
    text = "actions[1] has keys ['a', 'c'], expected ['a', 'b']."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        checker.check([{"a": 0, "b": np.zeros(1)}, {"a": 0, "c": np.zeros(1)}])


def test_an_empty_tuple_or_dict_gives_every_sub_env_its_empty_action() -> None:
    assert ActionChecker(Tuple(()), 3).per_env(()) == [(), (), ()]
    dicts = ActionChecker(Dict(), 3).per_env([{}, {}, {}])
    assert dicts == [{}, {}, {}]
    assert len({id(action) for action in dicts}) == 3  # one dict each: a sub-env may edit its own
    nested = ActionChecker(Dict(a=Tuple(()), b=Dict(c=Dict())), 2)
    assert nested.per_env({"a": (), "b": {"c": {}}}) == [{"a": (), "b": {"c": {}}}] * 2


def test_other_spaces_only_check_the_number_of_actions() -> None:
    checker = ActionChecker(Sequence(Discrete(2)), 2)
    assert checker.split(checker.check([(0,), (1, 1)])) == [(0,), (1, 1)]
    with pytest.raises(ValueError, match="one action per sub-env"):
        checker.check([(0,)])


def test_a_batch_without_a_length_for_another_space_is_named_by_its_type() -> None:
    space = Sequence(Discrete(2))
    text = f"actions must hold one action per sub-env (2) for {space!r}, got int."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        ActionChecker(space, 2).check(5)


def test_per_env_fast_path_gives_python_ints_and_falls_back_to_full_checks() -> None:
    checker = ActionChecker(Discrete(3, start=1), 3)
    assert checker.per_env(np.array([1, 3, 2])) == [1, 3, 2]
    assert checker.per_env([1, 1, 1]) == [1, 1, 1]
    assert checker.per_env(np.array([1.0, 2.0, 3.0])) == [1, 2, 3]
    with pytest.raises(sekai.InvalidAction) as info:
        checker.per_env(np.array([1, 0, 2]))
    assert info.value.index == 1
    with pytest.raises(sekai.InvalidAction):
        checker.per_env([1, 2, 4])
    with pytest.raises(ValueError):
        checker.per_env([1, 2])
    frozen = np.array([False, False, True])
    assert checker.per_env(np.array([1, 2, 9]), frozen)[:2] == [1, 2]


def test_large_discrete_batches_are_checked_with_numpy() -> None:
    checker = ActionChecker(Discrete(4, start=2), 1000)
    actions = np.random.default_rng(0).integers(2, 6, size=1000)
    assert checker.check(actions) is actions
    per_env = checker.per_env(actions)
    assert per_env == actions.tolist() and type(per_env[0]) is int
    actions[700] = 6
    with pytest.raises(sekai.InvalidAction) as info:
        checker.per_env(actions)
    assert info.value.index == 700
    actions[700] = -(2**63)
    with pytest.raises(sekai.InvalidAction):
        checker.check(actions)


@pytest.mark.parametrize("start", [0, 5])
@pytest.mark.parametrize("form", ["list", "int32", "int64"])
def test_per_env_fast_path_of_a_discrete_space_beyond_the_set_checks_both_ends(
    start: int, form: str
) -> None:
    # A Discrete space of more than 1024 actions is checked against its range, not a set.
    space = Discrete(2000, start=start)
    checker = ActionChecker(space, 2)
    for bad in (start - 1, start + 2000):
        actions: Any = [start, bad] if form == "list" else np.array([start, bad], dtype=form)
        with pytest.raises(sekai.InvalidAction) as info:
            checker.per_env(actions)
        assert info.value.index == 1
        assert info.value.action == bad
        assert str(info.value) == f"Action {bad} is not valid for space {space!r} (sub-env 1)."
    assert checker.per_env([start, start + 1999]) == [start, start + 1999]


def test_a_sync_vec_env_of_a_large_discrete_space_refuses_a_negative_action() -> None:
    from sekai.testing.envs import Drift
    from sekai.vector import SyncVecEnv

    stepped: list[Any] = []

    class _Wide(Drift):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = Discrete(2000)

        def step(self, action: Any) -> Any:
            stepped.append(action)
            return super().step(action)

    with SyncVecEnv([_Wide, _Wide]) as vec:
        vec.reset(seed=0)
        with pytest.raises(sekai.InvalidAction) as info:
            vec.step([0, -1])
        assert info.value.index == 1 and info.value.action == -1
        assert stepped == []  # refused before any sub-env stepped


def _objects(*entries: Any) -> np.ndarray:
    batch = np.empty(len(entries), dtype=object)
    for index, entry in enumerate(entries):
        batch[index] = entry
    return batch


@pytest.mark.parametrize(
    ("actions", "index", "given"),
    [
        (_objects(0, [1], 1), 1, [1]),
        (_objects(0, 1, np.array([1, 0])), 2, np.array([1, 0])),
    ],
    ids=["list-entry", "array-entry"],
)
def test_an_object_batch_with_an_entry_that_is_no_single_number_names_that_sub_env(
    actions: np.ndarray, index: int, given: Any
) -> None:
    space = Discrete(2)
    with pytest.raises(sekai.InvalidAction) as info:
        ActionChecker(space, 3).check(actions)
    assert info.value.index == index
    np.testing.assert_array_equal(info.value.action, given)
    assert type(info.value.action) is type(given)
    assert (
        str(info.value) == f"Action {given!r} is not valid for space {space!r} (sub-env {index})."
    )
