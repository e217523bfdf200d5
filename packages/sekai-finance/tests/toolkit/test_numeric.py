"""Left-to-right sums and divisions along an axis (``sekai.finance._numeric``)."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance._numeric import divide_along, seq_sum


def python_sums(rows: np.ndarray) -> list[float]:
    """Python's left-to-right ``sum`` of each row, as the single envs add."""
    out = []
    for row in rows.tolist():
        total = row[0]
        for x in row[1:]:
            total += x
        out.append(total)
    return out


# Magnitudes far apart make the association of the additions visible in the result.
SCALES = np.array([1e16, 1, -1e16, 3, 1e-3, 7, 1])
VALUES = np.random.default_rng(0).standard_normal((64, 7)) * SCALES


@pytest.mark.parametrize("width", [2, 3, 5, 7])
def test_seq_sum_adds_left_to_right_along_the_last_axis(width: int) -> None:
    rows = VALUES[:, :width]
    assert seq_sum(rows).tolist() == python_sums(rows)
    if width >= 3:  # the data tells associations apart
        assert python_sums(rows) != python_sums(rows[:, ::-1])


@pytest.mark.parametrize("width", [2, 5, 7, 20])
def test_seq_sum_along_axis_0_equals_the_rows_of_the_transpose(width: int) -> None:
    rows = np.random.default_rng(width).standard_normal((33, width)) * 10.0 ** np.arange(width)
    expected = python_sums(rows)
    assert seq_sum(rows.T, 0).tolist() == expected  # a transposed (F-ordered) view
    assert seq_sum(np.ascontiguousarray(rows.T), 0).tolist() == expected
    assert seq_sum(rows, -1).tolist() == expected


def test_seq_sum_of_one_term_is_a_copy_and_of_none_is_zero() -> None:
    x = np.arange(6.0).reshape(1, 6)
    total = seq_sum(x, 0)
    total[0] = 99.0
    assert x[0, 0] == 0.0
    assert seq_sum(np.zeros((0, 4)), 0).tolist() == [0.0] * 4
    assert seq_sum(np.zeros((4, 0))).tolist() == [0.0] * 4
    # one term along the last axis: a strided view, or a lone number
    assert seq_sum(np.arange(6.0).reshape(6, 1)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert seq_sum(np.array([2.5])) == 2.5


def test_divide_along_matches_broadcast_division_on_both_axes() -> None:
    x = np.random.default_rng(1).random((50, 6))
    totals = seq_sum(x)
    assert np.array_equal(divide_along(x, totals), x / totals[:, None])
    columns = np.ascontiguousarray(x.T)
    assert np.array_equal(divide_along(columns, totals, 0), (x / totals[:, None]).T)
    out = columns.copy()
    assert divide_along(out, totals, 0, out=out) is out


@pytest.mark.parametrize("width", [2, 3, 6, 9, 17, 40])
def test_seq_sum_of_a_c_ordered_block_adds_its_rows_left_to_right(width: int) -> None:
    rng = np.random.default_rng(width)
    rows = rng.standard_normal((257, width)) * 10.0 ** rng.integers(-8, 17, width)
    block = np.ascontiguousarray(rows.T)  # (width, 257): one reduce over the rows
    assert block.flags.c_contiguous
    assert seq_sum(block, 0).tolist() == python_sums(rows)


@pytest.mark.parametrize("columns", [1, 2])
@pytest.mark.parametrize("width", [8, 9, 17, 40])
def test_seq_sum_of_a_block_of_one_column_adds_left_to_right_too(columns: int, width: int) -> None:
    # (k, 1) is one contiguous run: np.add.reduce would sum it pairwise from k = 8 on (one
    # native sub-env of a Portfolio with 7 assets and cash).
    rng = np.random.default_rng(width)
    rows = rng.standard_normal((columns, width)) * 10.0 ** rng.integers(-8, 17, width)
    block = np.ascontiguousarray(rows.T)
    assert seq_sum(block, 0).tolist() == python_sums(rows)
    assert seq_sum(rows, -1).tolist() == python_sums(rows)
