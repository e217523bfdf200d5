"""MultiBinary: sizes, draws identical to gymnasium, masks (-1 and 2 free), membership, repr."""

from __future__ import annotations

import copy
import pickle
import re

import gymnasium
import numpy as np
import pytest

from sekai.spaces import MultiBinary


def test_multi_binary_stores_n_as_tuple_and_is_int8() -> None:
    assert MultiBinary(4).n == (4,)
    assert MultiBinary((2, 3)).n == (2, 3)
    assert MultiBinary([2, 3]).shape == (2, 3)
    assert MultiBinary(4).dtype == np.int8


@pytest.mark.parametrize("n", [0, -1, (2, 0)])
def test_multi_binary_rejects_sizes_below_one(n: object) -> None:
    with pytest.raises(ValueError, match=">= 1"):
        MultiBinary(n)


def test_multi_binary_rejects_non_integer_size() -> None:
    with pytest.raises(TypeError):
        MultiBinary(2.5)


def test_multi_binary_sample_matches_gymnasium() -> None:
    ours, theirs = MultiBinary((3, 2), seed=9), gymnasium.spaces.MultiBinary((3, 2), seed=9)
    for _ in range(20):
        a, b = ours.sample(), theirs.sample()
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.int8


@pytest.mark.parametrize("free", [-1, 2])
def test_multi_binary_mask_forces_and_frees(free: int) -> None:
    mb = MultiBinary(4, seed=0)
    mask = np.array([1, 0, free, free], dtype=np.int8)
    draws = np.array([mb.sample(mask) for _ in range(40)])
    assert (draws[:, 0] == 1).all() and (draws[:, 1] == 0).all()
    assert set(draws[:, 2].tolist()) == {0, 1}


def test_multi_binary_masked_sample_matches_gymnasium() -> None:
    mask = np.array([2, 1, 0, 2, 2, 1], dtype=np.int8)
    ours, theirs = MultiBinary(6, seed=1), gymnasium.spaces.MultiBinary(6, seed=1)
    assert [ours.sample(mask).tolist() for _ in range(8)] == [
        theirs.sample(mask).tolist() for _ in range(8)
    ]


def test_multi_binary_rejects_mask_of_wrong_shape() -> None:
    with pytest.raises(ValueError, match=re.escape("mask.shape must be (4,), got (3,).")):
        MultiBinary(4).sample(np.ones(3, dtype=np.int8))


def test_multi_binary_rejects_mask_values() -> None:
    with pytest.raises(ValueError, match="mask entries"):
        MultiBinary(2).sample(np.array([3, 0]))


def test_multi_binary_contains() -> None:
    mb = MultiBinary(3)
    assert mb.contains(np.array([0, 1, 1], dtype=np.int8))
    assert mb.contains([0, 1, 0]) and mb.contains(np.array([True, False, True]))
    assert not mb.contains(np.array([0, 2, 1])) and not mb.contains(np.array([0.0, 1.0, 1.0]))
    assert not mb.contains(np.array([0, 1])) and not mb.contains(1)


def test_multi_binary_repr() -> None:
    assert repr(MultiBinary(4)) == "MultiBinary(4)"
    assert repr(MultiBinary((4,))) == "MultiBinary(4)"
    assert repr(MultiBinary((2, 3))) == "MultiBinary((2, 3))"


def test_multi_binary_equality_and_pickle() -> None:
    mb = MultiBinary((2, 3), seed=2)
    assert mb == MultiBinary([2, 3]) and mb != MultiBinary(6)
    with pytest.raises(TypeError, match="unhashable type: 'MultiBinary'"):
        hash(mb)
    a, b = pickle.loads(pickle.dumps(mb)), copy.deepcopy(mb)
    expected = mb.sample()
    np.testing.assert_array_equal(a.sample(), expected)
    np.testing.assert_array_equal(b.sample(), expected)


def test_multi_binary_jsonable_round_trip() -> None:
    assert MultiBinary((2, 3)).to_jsonable() == {"type": "MultiBinary", "n": [2, 3]}
    assert MultiBinary.from_jsonable({"type": "MultiBinary", "n": [2, 3]}) == MultiBinary((2, 3))
