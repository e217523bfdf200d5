"""Tests for BlockBootstrap: resampled rows, circular blocks and validation."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import BlockBootstrap

HISTORY = np.arange(1, 11, dtype=float)[:, None] * np.array([[1e-3, -1e-3]])


def _row_index(increments: np.ndarray) -> np.ndarray:
    return np.rint(increments[..., 0] / 1e-3).astype(int) - 1


def test_increments_are_circular_blocks_of_history_rows() -> None:
    model = BlockBootstrap(HISTORY, block_size=4, s0=[10.0, 20.0])
    sim = model.simulate(np.random.default_rng(0), 24, n_paths=30)
    increments = np.diff(np.log(sim.prices), axis=1)
    index = _row_index(increments)
    np.testing.assert_allclose(increments, HISTORY[index], atol=1e-12)
    blocks = index.reshape(30, 6, 4)
    np.testing.assert_array_equal(np.diff(blocks, axis=2) % 10, 1)
    np.testing.assert_allclose(sim.prices[:, 0], [[10.0, 20.0]] * 30)


def test_block_starts_are_uniform() -> None:
    sim = BlockBootstrap(HISTORY, block_size=1).simulate(np.random.default_rng(1), 20_000)
    index = _row_index(np.diff(np.log(sim.prices), axis=0))
    counts = np.bincount(index, minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200


def test_online_stepper_draws_the_same_blocks() -> None:
    stepper = BlockBootstrap(HISTORY, block_size=3).stepper(50)
    rng = np.random.default_rng(2)
    stepper.reset(rng)
    rows = np.stack([_row_index(stepper.step(rng)) for _ in range(9)], axis=1)
    np.testing.assert_array_equal(np.diff(rows.reshape(50, 3, 3), axis=2) % 10, 1)


@pytest.mark.parametrize(
    ("returns", "block_size", "error", "message"),
    [
        (HISTORY, 0, ValueError, "block_size must be an int >= 1"),
        (HISTORY, 11, ValueError, r"block_size must be <= the number of return rows \(10\)"),
        (HISTORY, 2.0, ValueError, "block_size must be an int"),
        (HISTORY, True, ValueError, "block_size must be an int"),
        (np.ones((2, 2, 2)), 1, ValueError, "shape"),
        (np.array([0.1, np.nan]), 1, ValueError, "finite"),
    ],
)
def test_invalid_arguments_are_refused(
    returns: np.ndarray, block_size: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        BlockBootstrap(returns, block_size=block_size)  # type: ignore[arg-type]


def test_s0_needs_one_entry_per_column_of_returns() -> None:
    with pytest.raises(ValueError, match="s0 has 3 entries but returns have 2 columns"):
        BlockBootstrap(np.zeros((10, 2)), block_size=2, s0=[1.0, 2.0, 3.0])
