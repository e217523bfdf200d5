"""Tests for CointegratedPair: common trend plus an exact OU spread."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import CointegratedPair


def test_spread_state_is_the_log_price_spread() -> None:
    model = CointegratedPair(s0=(100.0, 50.0))
    sim = model.simulate(np.random.default_rng(0), 40)
    spread = np.log(sim.prices[:, 0] / sim.prices[:, 1]) - np.log(2.0)
    np.testing.assert_allclose(spread, sim.state["spread"], atol=1e-12)
    assert sim.state["spread"][0] == 0.0


def test_spread_and_trend_moments_match_the_closed_form() -> None:
    mu, sigma, theta, spread_sigma, dt, steps = 0.05, 0.2, 5.0, 0.1, 1 / 252, 63
    model = CointegratedPair(mu, sigma, theta, spread_sigma, dt=dt)
    sim = model.simulate(np.random.default_rng(1), steps, n_paths=30_000)
    t = steps * dt
    s = sim.state["spread"][:, -1]
    expected_var = spread_sigma**2 * (1 - np.exp(-2 * theta * t)) / (2 * theta)
    assert abs(s.var() / expected_var - 1.0) < 0.04
    assert abs(s.mean()) < 4 * np.sqrt(expected_var / s.size)
    trend = 0.5 * np.log(sim.prices[:, -1, 0] * sim.prices[:, -1, 1] / 100.0**2)
    assert abs(trend.var() / (sigma**2 * t) - 1.0) < 0.04
    assert abs(trend.mean() - (mu - 0.5 * sigma**2) * t) < 4 * sigma * np.sqrt(t / s.size)


def test_s0_must_hold_two_prices() -> None:
    with pytest.raises(ValueError, match="two initial prices"):
        CointegratedPair(s0=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="s0 must be finite numbers > 0"):
        CointegratedPair(s0=(1.0, -2.0))


def test_the_spread_is_exact_at_coarse_steps() -> None:
    # theta dt = 5: an Euler step would give the spread a variance of spread_sigma**2 dt
    theta, spread_sigma, dt, steps = 5.0, 0.1, 1.0, 3
    model = CointegratedPair(sigma=0.0, theta=theta, spread_sigma=spread_sigma, dt=dt)
    sim = model.simulate(np.random.default_rng(2), steps, n_paths=20_000)
    s = sim.state["spread"][:, -1]
    expected_var = spread_sigma**2 * (1 - np.exp(-2 * theta * steps * dt)) / (2 * theta)
    assert abs(s.var() / expected_var - 1.0) < 0.05
