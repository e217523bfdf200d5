"""Action-mask helpers."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.utils.action_mask import (
    action_mask_space,
    flatten_action_mask,
    get_action_mask,
    supports_action_mask,
)


class _Env(sekai.Env[Any, Any]):
    def __init__(self) -> None:
        self.observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        self.action_space = sekai.Discrete(3)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


class _Masked(_Env):
    def action_mask(self) -> np.ndarray:
        return np.array([0, 1, 1], dtype=np.int8)


class _MaskAttribute(_Env):
    action_mask = np.array([1, 0, 0], dtype=np.int8)


def test_supports_and_get_action_mask_through_wrappers() -> None:
    assert supports_action_mask(sekai.TimeLimit(_Masked(), 3))
    assert not supports_action_mask(sekai.TimeLimit(_Env(), 3))
    assert get_action_mask(sekai.TimeLimit(_Masked(), 3)).tolist() == [0, 1, 1]
    assert get_action_mask(_Env()) is None
    assert get_action_mask(_MaskAttribute()).tolist() == [1, 0, 0]
    assert sekai.get_action_mask is get_action_mask


@pytest.mark.parametrize("helper", [get_action_mask, supports_action_mask])
def test_something_other_than_an_env_is_a_type_error_naming_it(helper: Any) -> None:
    with pytest.raises(TypeError, match=r"expected a sekai\.Env, got NoneType\.$"):
        helper(None)
    vec = sekai.SyncVecEnv([_Masked, _Masked])
    message = re.escape('vec.call("action_mask") gives one mask per sub-env')
    with pytest.raises(
        TypeError, match=rf"got sekai\.vector\.sync_vec_env\.SyncVecEnv\..*{message}"
    ):
        helper(vec)
    vec.close()


@pytest.mark.parametrize(
    "space, n",
    [
        (sekai.Discrete(5), 5),
        (sekai.MultiDiscrete([2, 3, 4]), 9),
        (sekai.MultiDiscrete([[2, 3], [4, 5]]), 14),
        (sekai.Box(-1.0, 1.0, shape=(2, 3)), 6),
    ],
)
def test_action_mask_space_sizes(space: sekai.Space[Any], n: int) -> None:
    mask_space = action_mask_space(space)
    assert isinstance(mask_space, sekai.MultiBinary) and mask_space.n == (n,)


def test_action_mask_space_rejects_other_spaces() -> None:
    with pytest.raises(
        TypeError, match=r"^Action masks are not supported for Dict action spaces\.$"
    ):
        action_mask_space(sekai.Dict(a=sekai.Discrete(2)))


def test_flatten_discrete_mask() -> None:
    out = flatten_action_mask(sekai.Discrete(3), np.array([1, 0, 1], dtype=np.int8))
    assert out.dtype == bool and out.tolist() == [True, False, True]
    with pytest.raises(ValueError, match=r"must have shape \(3,\), got \(2,\)"):
        flatten_action_mask(sekai.Discrete(3), [1, 0])


def test_flatten_multi_discrete_tuple_and_padded_layouts_agree() -> None:
    space = sekai.MultiDiscrete([2, 3])
    as_tuple = (np.array([1, 0]), np.array([0, 1, 1]))
    padded = np.array([[1, 0, 0], [0, 1, 1]])
    expected = [True, False, False, True, True]
    assert flatten_action_mask(space, as_tuple).tolist() == expected
    assert flatten_action_mask(space, padded).tolist() == expected


def test_flatten_reads_a_list_mask_as_sample_does() -> None:
    # Before: any list was read as the per-entry form, so a padded mask given as a nested list
    # (which sample() takes) was refused, and check_env reported a valid action_mask().
    space = sekai.MultiDiscrete([2, 3])
    padded, ragged = [[1, 0, 0], [0, 1, 1]], [[1, 0], [0, 1, 1]]
    for mask in (padded, ragged):
        space.sample(mask=mask)
        assert flatten_action_mask(space, mask).tolist() == [True, False, False, True, True]

    class ListMask(sekai.Env[Any, Any]):
        observation_space = sekai.Box(0.0, 1.0, shape=(1,))
        action_space = space

        def action_mask(self) -> list[list[int]]:
            return padded

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            self._set_rng(seed)
            return sekai.ResetResult(np.zeros(1, np.float32), {})

        def step(self, action: Any) -> Any:
            assert action.tolist() in ([0, 1], [0, 2])
            return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})

    assert sekai.check_env(ListMask(), n_steps=10) == []


def test_flatten_nested_multi_discrete_tuple() -> None:
    space = sekai.MultiDiscrete([[2, 1], [1, 2]])
    mask = ((np.array([1, 1]), np.array([1])), (np.array([0]), np.array([0, 1])))
    assert flatten_action_mask(space, mask).tolist() == [True, True, True, False, False, True]


def test_flatten_multi_discrete_wrong_layouts() -> None:
    space = sekai.MultiDiscrete([2, 3, 4])
    with pytest.raises(
        ValueError,
        match=re.escape("shape (3, 4) (one row per entry, padded to max(nvec)), got (3, 2)"),
    ):
        flatten_action_mask(space, np.ones((3, 2)))
    with pytest.raises(ValueError, match="needs 3 sub-masks at dimension \\(\\), got 1"):
        flatten_action_mask(space, (np.ones(2),))
    with pytest.raises(
        ValueError,
        match=r"The mask for dimension \(0,\) must have shape \(2,\) \(nvec\[0\] = 2\), got \(3,\)",
    ):
        flatten_action_mask(space, (np.ones(3), np.ones(3), np.ones(4)))


def test_flatten_box_mask_broadcasts() -> None:
    space = sekai.Box(-1.0, 1.0, shape=(2, 2))
    assert flatten_action_mask(space, np.array([1, 0])).tolist() == [True, False, True, False]
    with pytest.raises(ValueError, match="broadcastable"):
        flatten_action_mask(space, np.ones(3))


@pytest.mark.parametrize(
    ("space", "mask"),
    [
        (sekai.Discrete(3), np.array([0.2, 0.3, 0.5])),
        (sekai.MultiDiscrete([2, 3]), (np.array([1, 0], np.int8), np.array([0, 2, 1], np.int8))),
    ],
)
def test_flatten_action_mask_refuses_entries_other_than_0_and_1_as_sample_does(
    space: Any, mask: Any
) -> None:
    with pytest.raises(ValueError, match=r"must hold only 0 \(forbidden\) and 1 \(allowed\)"):
        space.sample(mask)
    with pytest.raises(ValueError, match=r"must hold only 0 \(forbidden\) and 1 \(allowed\)"):
        flatten_action_mask(space, mask)


def test_flatten_action_mask_returns_a_copy_of_a_bool_mask() -> None:
    mask = np.array([True, False, True])
    flat = flatten_action_mask(sekai.Discrete(3), mask)
    mask[1] = True
    assert flat.tolist() == [True, False, True]


def test_flatten_box_mask_allows_every_nonzero_entry_as_sample_does() -> None:
    space = sekai.Box(-1.0, 1.0, shape=(3,))
    mask = np.array([-1.0, 0.0, 0.5])
    space.seed(0)
    kept = space.sample(mask) != 0
    assert kept.tolist() == [True, False, True]
    assert flatten_action_mask(space, mask).tolist() == kept.tolist()


def test_flatten_box_mask_refuses_a_mask_of_strings_as_sample_does() -> None:
    space = sekai.Box(-1.0, 1.0, shape=(2,))
    with pytest.raises(TypeError, match=r"must hold numbers or bools, got list of dtype <U1"):
        space.sample(["a", "b"])
    with pytest.raises(TypeError, match=r"must hold numbers or bools, got list of dtype <U1"):
        flatten_action_mask(space, ["a", "b"])


class _BrokenLookup(_Env):
    def has_attr(self, name: str) -> bool:
        raise AttributeError("lookup failed inside the env")


@pytest.mark.parametrize("helper", [get_action_mask, supports_action_mask])
def test_an_attribute_error_inside_an_env_is_raised_as_it_is(helper: Any) -> None:
    with pytest.raises(AttributeError, match=r"^lookup failed inside the env$"):
        helper(_BrokenLookup())
