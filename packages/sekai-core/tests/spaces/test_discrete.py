"""Discrete: construction, sampling (gymnasium's draws), masks, membership, repr."""

from __future__ import annotations

import copy
import pickle
import re

import gymnasium
import numpy as np
import pytest

import sekai
from sekai.spaces import Discrete


def test_discrete_seed_zero_draws_documented_values() -> None:
    d = sekai.Discrete(10)
    d.seed(0)
    assert [int(d.sample()) for _ in range(5)] == [8, 6, 5, 2, 3]


def test_discrete_attributes() -> None:
    d = Discrete(np.int64(3), start=np.int32(-1))
    assert d.n == 3 and type(d.n) is int
    assert d.start == -1 and type(d.start) is int
    assert d.shape == () and d.dtype == np.int64
    assert d.is_flattenable


@pytest.mark.parametrize("n", [0, -2])
def test_discrete_rejects_non_positive_n(n: int) -> None:
    with pytest.raises(ValueError, match=re.escape(f"n must be positive, got {n}.")):
        Discrete(n)


@pytest.mark.parametrize("n", [2.0, True, "3"])
def test_discrete_rejects_non_integer_n(n: object) -> None:
    with pytest.raises(TypeError):
        Discrete(n)  # type: ignore[arg-type]


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


@pytest.mark.parametrize(
    ("n", "start"),
    [(10, _I64_MAX - 4), (2**64, 0), (1, _I64_MAX + 1), (2, _I64_MIN - 1), (2**64 + 1, _I64_MIN)],
)
def test_discrete_rejects_ranges_int64_cannot_hold(n: int, start: int) -> None:
    msg = f"Discrete values [start, start + n - 1] = [{start}, {start + n - 1}] do not fit in int64"
    with pytest.raises(ValueError, match=re.escape(msg)) as info:
        Discrete(n, start=start)
    assert f"n={n}, start={start}" in str(info.value)


@pytest.mark.parametrize(
    ("n", "start"), [(5, _I64_MAX - 4), (1, _I64_MIN), (2**63, 0), (2**64, _I64_MIN)]
)
def test_discrete_ranges_at_the_int64_limits_sample_members(n: int, start: int) -> None:
    d = Discrete(n, start=start, seed=0)
    with np.errstate(all="raise"):
        drawn = [d.sample() for _ in range(50)]
    assert all(type(s) is np.int64 and d.contains(s) for s in drawn)
    assert d.contains(start) and d.contains(start + n - 1)


@pytest.mark.parametrize(
    ("n", "start"),
    [(7, -3), (2**63, _I64_MIN), (2**63 + 1, _I64_MIN), (2**64, _I64_MIN), (2**63 + 5, 3 - 2**63)],
    ids=["7", "2**63", "2**63+1", "2**64", "2**63+5"],
)
def test_discrete_sample_draws_start_plus_rng_integers_n_for_every_n(n: int, start: int) -> None:
    # sample()'s rule, start + rng.integers(n), holds past n = 2**63 as well, where NumPy needs
    # the unsigned dtype to take n: the same stream, whose top value start + n - 1 is drawable.
    rng = np.random.default_rng(0)
    expected = [start + int(rng.integers(n, dtype=np.uint64)) for _ in range(20)]
    d = Discrete(n, start=start, seed=0)
    assert [int(d.sample()) for _ in range(20)] == expected


def test_discrete_sample_returns_np_int64_in_range() -> None:
    d = Discrete(3, start=-1, seed=1)
    for _ in range(50):
        s = d.sample()
        assert type(s) is np.int64
        assert -1 <= s <= 1
    assert repr(Discrete(2, seed=0).sample()).startswith("np.int64(")


def test_discrete_sample_matches_gymnasium() -> None:
    ours, theirs = Discrete(7, start=-3, seed=11), gymnasium.spaces.Discrete(7, start=-3, seed=11)
    assert [int(ours.sample()) for _ in range(100)] == [int(theirs.sample()) for _ in range(100)]


def test_discrete_masked_sample_matches_gymnasium_and_respects_mask() -> None:
    mask = np.array([0, 1, 0, 1, 1], dtype=np.int8)
    ours, theirs = Discrete(5, seed=2), gymnasium.spaces.Discrete(5, seed=2)
    drawn = [int(ours.sample(mask)) for _ in range(60)]
    assert drawn == [int(theirs.sample(mask)) for _ in range(60)]
    assert set(drawn) == {1, 3, 4}


def test_discrete_mask_accepts_bool_arrays() -> None:
    d = Discrete(3, start=10, seed=0)
    assert {int(d.sample(np.array([False, True, False]))) for _ in range(10)} == {11}


def test_discrete_rejects_mask_of_wrong_shape() -> None:
    with pytest.raises(ValueError, match=re.escape("mask.shape must be (3,), got (2,).")):
        Discrete(3).sample(np.ones(2, dtype=np.int8))


@pytest.mark.parametrize(
    ("mask", "bad"),
    [([0.9, 0.9, 1.0], "0.9 at index 0"), ([1, 2, 1], "2 at index 1"), ([0.3, 0.3, 0.4], "0.3")],
)
def test_discrete_mask_entries_must_be_zero_or_one(mask: list[float], bad: str) -> None:
    # Probabilities passed as a mask were read as "only entries equal to 1 are allowed".
    msg = f"A mask for Discrete(3) must hold only 0 (forbidden) and 1 (allowed), got {bad}"
    with pytest.raises(ValueError, match=re.escape(msg)):
        Discrete(3, seed=0).sample(np.array(mask))
    assert int(Discrete(3, seed=0).sample(np.array([0.0, 1.0, 0.0]))) == 1


def test_discrete_rejects_all_masked() -> None:
    with pytest.raises(
        ValueError, match=re.escape("All actions masked — at least one must be valid.")
    ):
        Discrete(3).sample(np.zeros(3, dtype=np.int8))


def test_discrete_contains() -> None:
    d = Discrete(3, start=-1)
    assert d.contains(-1) and d.contains(1) and not d.contains(2) and not d.contains(-2)
    assert d.contains(np.int64(0)) and d.contains(np.uint8(1)) and d.contains(np.array(0))
    assert not d.contains(True) and not d.contains(np.bool_(False))
    assert not d.contains(0.0) and not d.contains(np.float64(0.0))
    assert not d.contains(np.array([0])) and not d.contains("0") and not d.contains(None)
    assert not d.contains(np.array(0.0))


def test_discrete_repr() -> None:
    assert repr(Discrete(2)) == "Discrete(2)"
    assert repr(Discrete(3, start=-1)) == "Discrete(3, start=-1)"


def test_discrete_equality_and_hash() -> None:
    assert Discrete(3) == Discrete(3)
    assert Discrete(3) != Discrete(3, start=1)
    assert Discrete(3) != Discrete(4)
    with pytest.raises(TypeError, match="unhashable type: 'Discrete'"):
        hash(Discrete(3))


def test_discrete_pickle_and_deepcopy_continue_stream() -> None:
    d = Discrete(100, seed=4)
    d.sample()
    a, b = pickle.loads(pickle.dumps(d)), copy.deepcopy(d)
    assert a == d and b == d
    expected = [int(d.sample()) for _ in range(5)]
    assert [int(a.sample()) for _ in range(5)] == expected
    assert [int(b.sample()) for _ in range(5)] == expected


def test_discrete_jsonable() -> None:
    assert Discrete(3, start=-1).to_jsonable() == {"type": "Discrete", "n": 3, "start": -1}
    assert Discrete.from_jsonable({"type": "Discrete", "n": 3, "start": -1}) == Discrete(
        3, start=-1
    )
