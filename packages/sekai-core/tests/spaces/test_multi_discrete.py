"""MultiDiscrete: construction, gymnasium-identical draws, mask formats and errors, repr."""

from __future__ import annotations

import copy
import pickle
import re

import gymnasium
import numpy as np
import pytest

from sekai.spaces import (
    Discrete,
    MultiDiscrete,
    Sequence,
    batch_space,
    iterate,
    zero_sample,
)


def test_multi_discrete_attributes() -> None:
    md = MultiDiscrete([[2, 3], [4, 5]])
    assert md.shape == (2, 2) and md.dtype == np.int64
    assert md.nvec.dtype == np.int64 and md.start.dtype == np.int64
    np.testing.assert_array_equal(md.start, np.zeros((2, 2)))
    assert md.is_flattenable


def test_a_0d_multi_discrete_has_no_len() -> None:
    with pytest.raises(TypeError, match=f"^{re.escape('len() of a 0-d MultiDiscrete')}$"):
        len(MultiDiscrete(np.array(3)))
    assert len(MultiDiscrete([3])) == 1 and len(MultiDiscrete([[2, 3], [4, 5]])) == 2


def test_multi_discrete_rejects_non_positive_nvec() -> None:
    with pytest.raises(ValueError, match=re.escape("All entries in nvec must be positive.")):
        MultiDiscrete([2, 0])


def test_multi_discrete_rejects_start_of_wrong_shape() -> None:
    with pytest.raises(ValueError, match=re.escape("start.shape must match nvec.shape.")):
        MultiDiscrete([2, 3], start=[0, 0, 0])


@pytest.mark.parametrize("name", ["nvec", "start"])
def test_multi_discrete_names_a_ragged_nvec_or_start(name: str) -> None:
    ragged = [[2, 2], [3]]
    args = {"nvec": ragged} if name == "nvec" else {"nvec": [[2, 2], [3, 3]], "start": ragged}
    msg = (
        f"MultiDiscrete {name} must be a rectangular array of integers (a list of lists of "
        f"one length), got the ragged sequence [[2, 2], [3]]."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        MultiDiscrete(**args)


def test_multi_discrete_rejects_non_integer_dtype() -> None:
    with pytest.raises(TypeError):
        MultiDiscrete([2, 3], dtype=np.float32)


@pytest.mark.parametrize(
    ("nvec", "dtype", "start", "msg"),
    [
        ([300, 2], np.int8, None, "nvec[0] = 300 with start[0] = 0 gives values [0, 299]"),
        ([3, 2], np.uint8, [-1, 0], "nvec[0] = 3 with start[0] = -1 gives values [-1, 1]"),
        ([2, 3], np.uint8, [0, 254], "nvec[1] = 3 with start[1] = 254 gives values [254, 256]"),
        ([[2, 3], [4, 300]], np.int16, [[0, 0], [0, 32500]], "nvec[1, 1] = 300 with start[1, 1]"),
        (300, np.int8, None, "nvec = 300 with start = 0 gives values [0, 299]"),
    ],
)
def test_multi_discrete_rejects_ranges_its_dtype_cannot_hold(
    nvec: object, dtype: type, start: object, msg: str
) -> None:
    name = np.dtype(dtype).name
    with pytest.raises(ValueError, match=re.escape(msg)) as info:
        MultiDiscrete(nvec, dtype=dtype, start=start)
    assert f"which {name} cannot hold" in str(info.value)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_multi_discrete_rejects_ranges_past_int64(dtype: type) -> None:
    top = 2**63 - 1
    msg = f"nvec[0] = 10 with start[0] = {top - 4} gives values [{top - 4}, {top + 5}], "
    with pytest.raises(ValueError, match=re.escape(msg + "which int64 cannot hold")):
        MultiDiscrete([10], dtype=dtype, start=[top - 4])
    with pytest.raises(ValueError, match="MultiDiscrete start has values above the int64"):
        MultiDiscrete([1], dtype=dtype, start=np.array([2**63], dtype=np.uint64))


@pytest.mark.parametrize(
    ("nvec", "dtype", "start"),
    [([256], np.uint8, None), ([200, 2], np.int8, [-100, 126]), ([5], np.int64, [2**63 - 5])],
)
def test_multi_discrete_ranges_at_the_dtype_limits_give_members(
    nvec: list[int], dtype: type, start: list[int] | None
) -> None:
    md = MultiDiscrete(nvec, dtype=dtype, start=start, seed=0)
    zero = zero_sample(md)
    assert zero.dtype == np.dtype(dtype) and md.contains(zero)
    for _ in range(50):
        assert md.contains(md.sample())
    mask = tuple(np.ones(n, dtype=np.int8) for n in nvec)
    assert md.contains(md.sample(mask))


def test_multi_discrete_sample_matches_gymnasium() -> None:
    ours = MultiDiscrete([[2, 3], [4, 5]], start=[[1, 0], [0, -2]], seed=7)
    theirs = gymnasium.spaces.MultiDiscrete([[2, 3], [4, 5]], start=[[1, 0], [0, -2]], seed=7)
    for _ in range(50):
        a, b = ours.sample(), theirs.sample()
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
        assert ours.contains(a)


def test_multi_discrete_sample_uses_dtype() -> None:
    md = MultiDiscrete([3, 3], dtype=np.int32, seed=0)
    assert md.sample().dtype == np.int32


def test_multi_discrete_tuple_mask_matches_gymnasium() -> None:
    mask = (np.array([1, 0, 1], dtype=np.int8), np.array([0, 1, 1, 1], dtype=np.int8))
    ours, theirs = MultiDiscrete([3, 4], seed=1), gymnasium.spaces.MultiDiscrete([3, 4], seed=1)
    drawn = [ours.sample(mask).tolist() for _ in range(30)]
    assert drawn == [theirs.sample(mask).tolist() for _ in range(30)]
    assert {d[0] for d in drawn} == {0, 2}
    assert {d[1] for d in drawn} == {1, 2, 3}


def test_multi_discrete_padded_array_mask_equals_tuple_mask() -> None:
    tuple_mask = (np.array([0, 1], dtype=np.int8), np.array([1, 0, 1], dtype=np.int8))
    padded = np.array([[0, 1, 0], [1, 0, 1]], dtype=np.int8)
    a, b = MultiDiscrete([2, 3], seed=5), MultiDiscrete([2, 3], seed=5)
    assert [a.sample(tuple_mask).tolist() for _ in range(20)] == [
        b.sample(padded).tolist() for _ in range(20)
    ]


def test_multi_discrete_nested_tuple_mask() -> None:
    md = MultiDiscrete([[2, 3], [2, 2]], start=[[5, 0], [0, 0]], seed=0)
    mask = (
        (np.array([0, 1]), np.array([0, 0, 1])),
        (np.array([1, 0]), np.array([0, 1])),
    )
    np.testing.assert_array_equal(md.sample(mask), [[6, 2], [0, 1]])


def test_multi_discrete_rejects_padded_mask_of_wrong_shape() -> None:
    msg = (
        "A mask array for MultiDiscrete([2, 3, 4]) must have shape (3, 4) (one row per entry, "
        "padded to max(nvec)), got (3, 2)."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        MultiDiscrete([2, 3, 4]).sample(np.ones((3, 2), dtype=np.int8))


def test_multi_discrete_rejects_tuple_mask_of_wrong_length() -> None:
    with pytest.raises(ValueError, match=re.escape("needs 3 sub-masks at dimension (), got 1.")):
        MultiDiscrete([2, 3, 4]).sample((np.ones(2, dtype=np.int8),))


def test_multi_discrete_rejects_sub_mask_of_wrong_length() -> None:
    msg = "The mask for dimension (0,) must have shape (2,) (nvec[0] = 2), got (3,)."
    with pytest.raises(ValueError, match=re.escape(msg)):
        MultiDiscrete([2, 3]).sample((np.ones(3, dtype=np.int8), np.ones(3, dtype=np.int8)))


def test_multi_discrete_rejects_fully_masked_entry() -> None:
    with pytest.raises(ValueError, match=re.escape("All actions masked in dimension (0,).")):
        MultiDiscrete([2, 3]).sample((np.zeros(2, dtype=np.int8), np.ones(3, dtype=np.int8)))


def test_multi_discrete_contains() -> None:
    md = MultiDiscrete([2, 3], start=[1, -1])
    assert md.contains(np.array([1, -1])) and md.contains([2, 1]) and md.contains((1, 0))
    assert not md.contains(np.array([0, 0])) and not md.contains(np.array([1, 2]))
    assert not md.contains(np.array([1.0, 0.0]))
    assert not md.contains(np.array([1, 0, 0])) and not md.contains(1) and not md.contains("ab")
    assert md.contains(np.array([1, 0], dtype=np.uint8))


def test_multi_discrete_0d_samples_and_batch_rows_are_members() -> None:
    md = MultiDiscrete(np.array(4), start=np.array(1), dtype=np.int32, seed=0)
    drawn = md.sample()
    assert isinstance(drawn, np.ndarray) and drawn.shape == () and drawn.dtype == np.int32
    assert md.contains(drawn) and md.contains(np.int64(4)) and md.contains(1)
    assert not md.contains(np.int64(5)) and not md.contains(True) and not md.contains(1.0)
    assert not MultiDiscrete([4]).contains(np.int64(1))  # scalars only for shape ()
    batch = batch_space(md, 3)
    assert all(md.contains(row) for row in iterate(batch, batch.sample()))
    stacked = Sequence(md, max_length=3, stack=True, seed=1)
    assert all(stacked.contains(stacked.sample()) for _ in range(10))


def test_multi_discrete_mask_entries_must_be_zero_or_one() -> None:
    md = MultiDiscrete([3, 2], seed=0)
    msg = (
        "A mask for MultiDiscrete([3, 2]) must hold only 0 (forbidden) and 1 (allowed), got "
        "0.5 at index 0 of dimension (0,)."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        md.sample((np.array([0.5, 0.5, 1.0]), np.array([1, 1])))
    with pytest.raises(ValueError, match=re.escape("got 2 at index 1 of dimension (1,).")):
        md.sample(np.array([[1, 1, 0], [0, 2, 0]]))
    # Padding past nvec[i] is not read.
    assert md.sample(np.array([[0, 0, 1], [1, 0, 7]])).tolist() == [2, 0]


def test_multi_discrete_ragged_mask_list_is_read_as_per_entry_masks() -> None:
    md = MultiDiscrete([2, 3], seed=0)
    assert md.sample([np.array([0, 1]), np.array([0, 0, 1])]).tolist() == [1, 2]
    msg = "The mask for dimension (1,) must have shape (3,) (nvec[1] = 3), got (1,)."
    with pytest.raises(ValueError, match=re.escape(msg)):
        md.sample([np.array([0, 1]), np.array([1])])


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (MultiDiscrete([2, 2, 2, 2]), "MultiDiscrete([2, 2, 2, 2])"),
        (MultiDiscrete([[2, 3], [4, 5]]), "MultiDiscrete([[2, 3], [4, 5]])"),
        (MultiDiscrete([2, 2], start=[1, -1]), "MultiDiscrete([2, 2], start=[1, -1])"),
        (MultiDiscrete([2, 2], start=[0, 0]), "MultiDiscrete([2, 2])"),
        (MultiDiscrete([2, 2], dtype=np.int32), "MultiDiscrete([2, 2], dtype=int32)"),
    ],
)
def test_multi_discrete_repr(space: MultiDiscrete, text: str) -> None:
    assert repr(space) == text


def test_multi_discrete_equality_compares_dtype_and_start() -> None:
    assert MultiDiscrete([2, 3]) == MultiDiscrete(np.array([2, 3]))
    assert MultiDiscrete([2, 3]) != MultiDiscrete([2, 3], dtype=np.int32)
    assert MultiDiscrete([2, 3]) != MultiDiscrete([2, 3], start=[0, 1])
    assert MultiDiscrete([2, 3]) != MultiDiscrete([[2, 3]])
    with pytest.raises(TypeError, match="unhashable type: 'MultiDiscrete'"):
        hash(MultiDiscrete([2]))


def test_multi_discrete_indexing_gives_sub_spaces() -> None:
    md = MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [0, 0]])
    assert md[0, 1] == Discrete(3, start=1)
    assert md[1] == MultiDiscrete([4, 5])
    assert len(md) == 2


def test_multi_discrete_pickle_continues_stream() -> None:
    md = MultiDiscrete([5, 6, 7], seed=3)
    md.sample()
    a, b = pickle.loads(pickle.dumps(md)), copy.deepcopy(md)
    assert a == md and b == md
    expected = md.sample()
    np.testing.assert_array_equal(a.sample(), expected)
    np.testing.assert_array_equal(b.sample(), expected)
    with pytest.raises(ValueError):
        a.nvec[0] = 1


def test_multi_discrete_jsonable_round_trip() -> None:
    md = MultiDiscrete([2, 3], start=[1, -1], dtype=np.int32)
    assert md.to_jsonable() == {
        "type": "MultiDiscrete",
        "nvec": [2, 3],
        "start": [1, -1],
        "dtype": "int32",
    }
    assert MultiDiscrete.from_jsonable(md.to_jsonable()) == md
