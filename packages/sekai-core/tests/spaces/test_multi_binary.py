"""MultiBinary: sizes, draws identical to gymnasium, masks (-1 and 2 free), membership, repr."""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

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


def _is_member(n: tuple[int, ...], x: Any) -> bool:
    """The rule: an integer or bool array of shape n with only 0s and 1s (lists converted)."""
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return bool(
        isinstance(x, np.ndarray)
        and x.shape == n
        and x.dtype.kind in "iub"
        and ((x == 0) | (x == 1)).all()
    )


def _contains_cases() -> list[tuple[tuple[int, ...], Any]]:
    rng = np.random.default_rng(0)
    cases: list[tuple[tuple[int, ...], Any]] = []
    dtypes = [np.dtype(c) for c in "bhilqBHILQ"] + [np.dtype(">i4"), np.dtype(">u2")]
    for n in [(3,), (16,), (2, 32), (64,), (65,), (64, 64)]:
        for dtype in dtypes:
            info = np.iinfo(dtype)
            bits = rng.integers(0, 2, size=n).astype(dtype)
            cases.append((n, bits))
            for bad in {2, info.max, info.min, -1 if info.min else 255}:
                x = bits.copy()
                x[tuple(int(rng.integers(s)) for s in n)] = np.asarray(bad).astype(dtype)
                cases += [(n, x), (n, x.T.copy().T), (n, np.zeros(n, dtype) + info.min)]
            wide = rng.integers(0, 2, size=(2 * n[0], *n[1:])).astype(dtype)
            cases += [(n, wide[::2]), (n, wide[::2] * 2), (n, bits.astype(np.float64))]
            frozen = bits.copy()
            frozen.flags.writeable = False
            cases.append((n, frozen))
            if len(n) == 2:
                cases += [(n, bits.T), (n[::-1], bits.T)]  # transposed: another shape, or not
        ones = np.ones(n, np.uint8)
        cases += [
            (n, ones.astype(bool)),
            (n, (ones * 2).view(bool)),  # bools stored as 2: True all the same
            (n, np.ma.masked_array(ones * 2, mask=ones.astype(bool))),  # masked: NumPy's way
            (n, np.zeros((1, *n), np.int8)),
            (n, ones.tolist()),
            (n, (ones * 2).tolist()),
            (n, ones.astype(bool).tolist()),
            (n, ones.astype(float).tolist()),
        ]
    return cases


def test_multi_binary_contains_follows_the_rule_on_every_array() -> None:
    for n, x in _contains_cases():
        assert MultiBinary(n).contains(x) is _is_member(n, x), (n, x)


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
