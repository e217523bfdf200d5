"""The envs' Box action rule: one action (box_action) and a batch (bad_box_rows) agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sekai._box_actions import bad_box_rows, box_action, finite_float32_entry, real_array
from sekai.error import InvalidAction
from sekai.spaces import Box
from sekai.vector._contract.actions import ActionChecker

SPACE = Box(-1.0, 1.0, (2,), np.float32)

ACCEPTED: list[Any] = [
    np.array([0.5, -0.5], np.float32),
    np.array([3.0, -7.0]),  # beyond the bounds: the env clips it
    np.array([1, 2], np.int8),
    np.array([2**64 - 1, 0], np.uint64),
    [0.5, 1],
    (np.float16(1), 2**62),
]
REFUSED: list[Any] = [
    np.array([np.nan, 0.0]),
    np.array([0.0, -np.inf], np.float32),
    np.array([1.0]),  # wrong shape
    np.zeros((1, 2)),
    np.array([1 + 0j, 0]),
    ["1.5", "0"],
    [2**70, 0],  # an object array: no int dtype holds it
    [[1.0], [1.0, 2.0]],  # ragged
    None,
]


@pytest.mark.parametrize("action", ACCEPTED)
def test_a_real_finite_action_of_the_shape_is_returned_with_its_dtype(action: Any) -> None:
    checked = box_action(action, SPACE, (2,))
    assert checked.shape == (2,)
    assert checked.dtype == np.asarray(action).dtype
    if isinstance(action, np.ndarray):
        assert checked is action  # no copy on the common path


@pytest.mark.parametrize("action", [[True, False], np.array([True, True]), (False, 0.5)])
def test_bools_are_the_numbers_1_and_0_as_box_contains_says(action: Any) -> None:
    assert action in SPACE  # same_kind: a bool casts to a float
    checked = box_action(action, SPACE, (2,))
    assert checked.dtype == np.float64
    assert checked.tolist() == [float(entry) for entry in action]


@pytest.mark.parametrize("action", REFUSED)
def test_anything_else_is_an_invalid_action_naming_the_space(action: Any) -> None:
    with pytest.raises(InvalidAction) as info:
        box_action(action, SPACE, (2,))
    assert info.value.space is SPACE


def test_the_batch_rule_refuses_the_rows_the_single_rule_refuses() -> None:
    rows = [np.array([0.5, 0.5]), np.array([np.nan, 0.0]), np.array([2.0, -3.0])]
    rows += [np.array([0.0, np.inf])]
    verdicts = []
    for row in rows:
        try:
            box_action(row, SPACE, (2,))
            verdicts.append(False)
        except InvalidAction:
            verdicts.append(True)
    bad = bad_box_rows(np.stack(rows))
    assert bad is not None and bad.tolist() == verdicts == [False, True, False, True]


@pytest.mark.parametrize(
    ("batch", "expected"),
    [
        (np.zeros((3, 2), np.float32), None),
        (np.full((3, 2), 10**9, np.int64), None),  # integers: finite, nothing to compute
        (np.zeros((3, 2), bool), None),  # bools: 0 and 1
        (np.zeros((3, 2), complex), [True, True, True]),
        (np.array([[0, 0], [2**70, 0], [0, 0]], dtype=object), [True, True, True]),
    ],
)
def test_the_batch_rule_by_dtype(batch: np.ndarray, expected: list[bool] | None) -> None:
    bad = bad_box_rows(batch)
    assert (None if bad is None else bad.tolist()) == expected


def test_the_vector_action_check_applies_the_same_rule() -> None:
    checker = ActionChecker(SPACE, 2)
    for action in ACCEPTED:
        checker.check(np.stack([np.asarray(action)] * 2))
    for action in REFUSED:
        array = np.asarray(action, dtype=object) if action is None else action
        try:
            batch = np.stack([np.asarray(array)] * 2)
        except ValueError:  # ragged: no batch to build
            continue
        if batch.shape != (2, 2):
            continue  # a wrong shape is the batch's structure: ValueError, tested elsewhere
        with pytest.raises(InvalidAction):
            checker.check(batch)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble])
@pytest.mark.parametrize("size", [1, 3, 16, 17, 40])
def test_a_nan_or_inf_anywhere_is_refused_whatever_the_float_dtype_and_size(
    dtype: Any, size: int
) -> None:
    space = Box(-1.0, 1.0, (size,), np.float32)
    ok = np.full(size, 0.5, dtype)
    assert box_action(ok, space, (size,)) is ok
    for where in {0, size // 2, size - 1}:
        for bad in (np.nan, np.inf, -np.inf):
            action = ok.copy()
            action[where] = bad
            with pytest.raises(InvalidAction):
                box_action(action, space, (size,))


def test_finite_entries_beyond_a_double_pass_and_other_shapes_are_checked_too() -> None:
    huge = np.array([np.finfo(np.longdouble).max], np.longdouble)  # finite, not a Python float
    assert box_action(huge, SPACE, (1,)) is huge
    grid = np.zeros((2, 2), np.float32)
    assert box_action(grid, SPACE, (2, 2)) is grid
    grid[1, 0] = np.nan
    with pytest.raises(InvalidAction):
        box_action(grid, SPACE, (2, 2))
    with pytest.raises(InvalidAction):
        box_action(np.array(np.inf), SPACE, ())


def test_the_float32_fast_path_returns_the_entry_of_a_finite_one_element_float32_array() -> None:
    entry = finite_float32_entry(np.array([-7.5], np.float32))  # beyond the bounds: passes
    assert type(entry) is np.float32 and entry == -7.5


@pytest.mark.parametrize(
    "action",
    [
        np.array([np.nan], np.float32),
        np.array([-np.inf], np.float32),
        np.array([0.5]),  # float64
        np.array([0.5], ">f4"),  # float32, not in native byte order
        np.zeros((1, 1), np.float32),
        np.zeros(2, np.float32),
        np.float32(0.5),
        [np.float32(0.5)],
        np.ma.masked_array([0.5], dtype=np.float32),  # a subclass
    ],
)
def test_the_float32_fast_path_leaves_everything_else_to_box_action(action: Any) -> None:
    assert finite_float32_entry(action) is None


NON_FINITE = REFUSED[:2]


@pytest.mark.parametrize("action", ACCEPTED + NON_FINITE)
def test_real_array_keeps_what_box_action_keeps_and_non_finite_entries(action: Any) -> None:
    checked = real_array(action, SPACE, (2,))
    assert checked.dtype == np.asarray(action).dtype
    if isinstance(action, np.ndarray):
        assert checked is action


@pytest.mark.parametrize("action", REFUSED[2:])
def test_real_array_refuses_everything_else_naming_the_space(action: Any) -> None:
    with pytest.raises(InvalidAction) as info:
        real_array(action, SPACE, (2,))
    assert info.value.space is SPACE
