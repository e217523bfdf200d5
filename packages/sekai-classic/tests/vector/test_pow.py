"""pow2 squares arrays exactly as scalars square themselves, whatever SIMD NumPy uses."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.envs.classic_control.vector._pow import pow2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pow2_matches_each_scalar_square_bit_for_bit(dtype: type) -> None:
    # 20,000 values: a plain product differs from C pow on about 1 in 1,000 of them, and
    # NumPy's AVX-512 (SVML) np.power on several percent.
    values = np.random.default_rng(7).uniform(-12.0, 12.0, 20_000).astype(dtype)
    expected = np.array([v**2 for v in values], dtype=dtype)
    squares = pow2(values)
    assert squares.dtype == dtype
    np.testing.assert_array_equal(squares, expected)


def test_pow2_keeps_the_shape_of_a_2d_batch() -> None:
    values = np.random.default_rng(8).normal(size=(64, 3)).astype(np.float32)
    squares = pow2(values)
    assert squares.shape == (64, 3)
    assert squares[5, 2] == values[5, 2] ** 2


def test_scalar_fallback_matches_each_scalar_square(monkeypatch: pytest.MonkeyPatch) -> None:
    # The per-element path pow2 takes where np.power is not powf (AVX-512): forced here, so it
    # is checked on CPUs that would not take it.
    from sekai.envs.classic_control.vector import _pow

    monkeypatch.setattr(_pow, "_power_is_powf", lambda: False)
    values = np.random.default_rng(9).uniform(-12.0, 12.0, (500, 2)).astype(np.float32)
    squares = pow2(values)
    assert squares.dtype == np.float32 and squares.shape == (500, 2)
    expected = np.array([[v**2 for v in row] for row in values], dtype=np.float32)
    np.testing.assert_array_equal(squares, expected)
