"""Tests for MeanReverting: the exact OU transition of the log price."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import MeanReverting


def test_starts_at_the_mean_by_default() -> None:
    assert MeanReverting(mean=50.0).s0 == 50.0
    assert MeanReverting(mean=50.0, s0=80.0).simulate(np.random.default_rng(0), 1).prices[
        0, 0
    ] == pytest.approx(80.0)


def test_log_price_moments_match_the_ou_closed_form() -> None:
    theta, mean, sigma, s0, dt, steps = 4.0, 100.0, 0.3, 150.0, 1 / 52, 13
    model = MeanReverting(theta, mean, sigma, s0=s0, dt=dt)
    x = np.log(model.simulate(np.random.default_rng(1), steps, n_paths=40_000).prices[:, -1, 0])
    t = steps * dt
    m = np.log(mean)
    expected_mean = m + (np.log(s0) - m) * np.exp(-theta * t)
    expected_var = sigma**2 * (1 - np.exp(-2 * theta * t)) / (2 * theta)
    assert abs(x.mean() - expected_mean) < 4 * np.sqrt(expected_var / x.size)
    assert abs(x.var() / expected_var - 1.0) < 0.03


def test_zero_volatility_decays_deterministically() -> None:
    sim = MeanReverting(theta=1.0, mean=100.0, sigma=0.0, s0=200.0, dt=0.5).simulate(
        np.random.default_rng(0), 3
    )
    x = np.log(sim.prices[:, 0])
    expected = np.log(100.0) + np.log(2.0) * np.exp(-0.5 * np.arange(4))
    np.testing.assert_allclose(x, expected, rtol=1e-12)


def test_theta_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"theta must be a finite number > 0, got 0\.0"):
        MeanReverting(theta=0.0)
