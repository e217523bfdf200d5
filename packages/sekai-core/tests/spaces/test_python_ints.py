"""Python ints of integer spaces judged by value, exactly: NumPy makes a list of ints on both
sides of 2**63 (``[2**63 + 1, 1]``) float64, rounding them, and holds ints beyond 64 bits as
objects; no value may pass through either on its way into a space or a batch."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from sekai.spaces import Box, MaskedBox, Sequence, concatenate
from sekai.spaces._explain import why_not_in

BIG = 2**63 + 1  # float64 rounds it to 2**63
U64_MAX = 2**64 - 1


def _u64_box(shape: tuple[int, ...] = (2,)) -> Box:
    return Box(0, U64_MAX, shape=shape, dtype=np.uint64)


@pytest.mark.parametrize(
    "x", [[BIG, 1], (BIG, 1), [U64_MAX, 0], [[BIG, 1]], [np.uint64(BIG), 1]], ids=repr
)
def test_a_uint64_box_judges_lists_of_ints_by_value(x: Any) -> None:
    box = _u64_box(np.shape(np.asarray(x, dtype=np.uint64)))
    assert np.asarray(x).dtype == np.float64  # what NumPy makes of it
    assert box.contains(x)
    assert why_not_in(box, x) is None


def test_python_ints_are_compared_with_the_bounds_exactly() -> None:
    box = Box(np.array([0, BIG], np.uint64), U64_MAX, dtype=np.uint64)
    assert box.contains([1, BIG]) and not box.contains([1, BIG - 1])
    assert why_not_in(box, [1, BIG - 1]) == (
        "[1]",
        f"is {BIG - 1}, outside [{BIG}, {U64_MAX}]",
    )
    # ints that no 64-bit dtype holds together: never a member of an integer Box
    assert not box.contains([-1, BIG]) and not box.contains([0, 2**64])
    assert why_not_in(box, [0, 2**64]) == ("[1]", f"is {2**64}, outside [{BIG}, {U64_MAX}]")
    # not ints: refused as before
    assert not box.contains([0.5, BIG]) and not box.contains(["1", BIG])


def test_full_range_uint64_samples_as_lists_are_members() -> None:
    box = _u64_box((4,))
    box.seed(0)
    assert all(box.contains(box.sample().tolist()) for _ in range(200))


def test_list_bounds_keep_their_ints() -> None:
    box = Box([0, BIG], U64_MAX, dtype=np.uint64)
    assert box.low.tolist() == [0, BIG]
    int64 = Box([-(2**63), 0], [2**63 - 1, 2**62 + 1], dtype=np.int64)
    assert int64.low.tolist() == [-(2**63), 0] and int64.high.tolist() == [2**63 - 1, 2**62 + 1]
    with pytest.warns(UserWarning, match=r"^Box high has values outside the range of int64"):
        clipped = Box(0, [BIG, 1], dtype=np.int64)
    assert clipped.high.tolist() == [2**63 - 1, 1]


def test_concatenate_stacks_lists_of_ints_exactly() -> None:
    box = _u64_box()
    batch = concatenate(box, [[BIG, 1], np.array([U64_MAX, 2], np.uint64)])
    assert batch.dtype == np.uint64 and batch.tolist() == [[BIG, 1], [U64_MAX, 2]]
    out = np.zeros((1, 2), np.uint64)
    assert concatenate(box, [(BIG, 1)], out) is out and out.tolist() == [[BIG, 1]]


@pytest.mark.parametrize(
    ("space", "item"),
    [
        (Box(0, U64_MAX, (2,), np.uint64), [-1, BIG]),
        (Box(0, U64_MAX, (2,), np.uint64), [2**64, 1]),
        (Box(-(2**63), 2**63 - 1, (2,), np.int64), [BIG, 1]),
    ],
)
def test_concatenate_refuses_ints_outside_the_dtype(space: Box, item: list[int]) -> None:
    message = (
        f"items[1] = {item!r} is not a member of {space!r}: stacking it as {space.dtype} would "
        "change its values."
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        concatenate(space, [[0, 0], item])


def test_masked_box_packs_and_judges_lists_of_ints_by_value() -> None:
    m = MaskedBox(0, U64_MAX, shape=(2,), max_size=2, dtype=np.uint64)
    sample = m.pack([[BIG, 1]])
    assert sample["values"].tolist() == [[BIG, 1], [0, 0]]
    as_lists = {"values": [[BIG, 1], [0, 0]], "mask": [1, 0]}
    assert m.contains(as_lists) and why_not_in(m, as_lists) is None
    low = MaskedBox(BIG, U64_MAX, shape=(2,), max_size=1, dtype=np.uint64)
    message = f"values must lie within [low, high]: values[0, 1] = {BIG - 1} is outside"
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        low.pack([[BIG, BIG - 1]])
    with pytest.raises(ValueError, match=r"^values must lie within \[low, high\]: .* = -1 "):
        low.pack([[BIG, -1]])


def test_masked_box_fill_value_keeps_its_ints() -> None:
    m = MaskedBox(0, U64_MAX, shape=(2,), max_size=1, dtype=np.uint64, fill_value=[BIG, 1])
    assert m.fill_value.tolist() == [BIG, 1]
    assert m.empty()["values"].tolist() == [[BIG, 1]]


def test_sequence_packs_lists_of_ints_exactly() -> None:
    seq = Sequence(_u64_box(), stack=True)
    assert seq.pack([[BIG, 1]]).tolist() == [[BIG, 1]]
    assert Sequence(_u64_box()).pack([[BIG, 1]]) == ([BIG, 1],)
