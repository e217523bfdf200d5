"""Tests for MertonJumpDiffusion: compensated drift, jump counts and variance."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import MertonJumpDiffusion


def test_expected_price_grows_at_mu_despite_jumps() -> None:
    model = MertonJumpDiffusion(
        mu=0.05, sigma=0.2, jump_intensity=5.0, jump_mean=-0.1, jump_std=0.1, dt=1 / 12
    )
    sim = model.simulate(np.random.default_rng(0), 12, n_paths=40_000)
    terminal = sim.prices[:, -1, 0]
    assert abs(terminal.mean() - 100.0 * np.exp(0.05)) < 4 * terminal.std() / np.sqrt(terminal.size)


def test_step_variance_and_jump_counts_match_the_closed_form() -> None:
    lam, m, s, sigma, dt = 20.0, -0.05, 0.08, 0.2, 1 / 52
    model = MertonJumpDiffusion(sigma=sigma, jump_intensity=lam, jump_mean=m, jump_std=s, dt=dt)
    sim = model.simulate(np.random.default_rng(1), 200_000)
    returns = np.diff(np.log(sim.prices[:, 0]))
    jumps = sim.state["jumps"][:, 0]
    assert jumps[0] == 0.0
    assert abs(jumps[1:].mean() - lam * dt) < 0.01
    expected_var = sigma**2 * dt + lam * dt * (m**2 + s**2)
    assert abs(returns.var() / expected_var - 1.0) < 0.02


def test_zero_intensity_is_plain_gbm() -> None:
    sim = MertonJumpDiffusion(jump_intensity=0.0).simulate(np.random.default_rng(2), 50, n_paths=3)
    assert np.all(sim.state["jumps"] == 0.0)


def test_online_stepper_has_the_same_step_distribution() -> None:
    model = MertonJumpDiffusion(jump_intensity=30.0, jump_mean=0.05, jump_std=0.02, dt=1 / 52)
    stepper = model.stepper(100_000)
    rng = np.random.default_rng(3)
    stepper.reset(rng)
    returns = stepper.step(rng)[:, 0]
    expected_var = 0.04 / 52 + 30.0 / 52 * (0.05**2 + 0.02**2)
    assert abs(returns.var() / expected_var - 1.0) < 0.03


def test_negative_jump_std_is_refused() -> None:
    with pytest.raises(ValueError, match="jump_std must be a finite number >= 0"):
        MertonJumpDiffusion(jump_std=-0.1)
