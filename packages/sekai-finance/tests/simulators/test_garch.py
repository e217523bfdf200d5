"""Tests for GARCH(1,1): the recursion, unconditional variance and kurtosis."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GARCH


def test_variance_state_follows_the_recursion_exactly() -> None:
    model = GARCH(omega=2e-6, alpha=0.1, beta=0.85, mu=0.1)
    sim = model.simulate(np.random.default_rng(0), 30)
    h = sim.state["variance"][:, 0]
    r = np.diff(np.log(sim.prices[:, 0]))
    eps = r - 0.1 / 252
    assert h[0] == pytest.approx(2e-6 / 0.05)
    np.testing.assert_allclose(h[1:], 2e-6 + 0.1 * eps**2 + 0.85 * h[:-1], rtol=1e-9)


def test_unconditional_variance_and_kurtosis_match_the_closed_form() -> None:
    omega, alpha, beta = 1e-6, 0.08, 0.9
    sim = GARCH(omega, alpha, beta).simulate(np.random.default_rng(1), 250, n_paths=800)
    r = np.diff(np.log(sim.prices[..., 0]), axis=1).ravel()
    h0 = omega / (1 - alpha - beta)
    assert abs(r.var() / h0 - 1.0) < 0.05
    persistence = alpha + beta
    kurtosis = 3 * (1 - persistence**2) / (1 - persistence**2 - 2 * alpha**2)
    measured = np.mean(r**4) / np.mean(r**2) ** 2
    assert measured > 3.5 and abs(measured / kurtosis - 1.0) < 0.2


def test_unconditional_variance_is_omega_over_one_minus_persistence_per_asset() -> None:
    model = GARCH(omega=[1e-6, 2e-6], alpha=0.1, beta=0.8)
    variance = model.unconditional_variance
    np.testing.assert_allclose(variance, [1e-5, 2e-5], rtol=1e-12)
    assert not variance.flags.writeable
    first = model.simulate(np.random.default_rng(0), 1).state["variance"][0]
    np.testing.assert_array_equal(first, variance)  # the recursion starts there


def test_non_stationary_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="alpha \\+ beta must be < 1"):
        GARCH(alpha=0.2, beta=0.8)
    with pytest.raises(ValueError, match="omega must be a finite number > 0"):
        GARCH(omega=0.0)


def test_shocks_are_correlated_across_assets_by_corr() -> None:
    corr = np.array([[1.0, 0.8], [0.8, 1.0]])
    model = GARCH(omega=1e-5, alpha=0.01, beta=0.5, corr=corr)
    sim = model.simulate(np.random.default_rng(3), 1, n_paths=40_000)
    returns = np.log(sim.prices[:, 1] / sim.prices[:, 0])
    assert abs(np.corrcoef(returns.T)[0, 1] - 0.8) < 0.02
