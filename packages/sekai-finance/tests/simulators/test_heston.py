"""Tests for Heston: martingale drift, variance mean reversion, leverage correlation."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import Heston


def test_defaults_and_v0_default_to_theta() -> None:
    model = Heston()
    assert (model.mu, model.kappa, model.theta, model.xi, model.rho, model.v0) == (
        0.05,
        2.0,
        0.04,
        0.3,
        -0.7,
        0.04,
    )
    assert model.state_spec() == {"variance": (1,)}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rho": 1.5}, r"rho must be a finite number in \[-1, 1\], got 1.5"),
        ({"kappa": 0.0}, "kappa must be a finite number > 0"),
        ({"theta": -0.1}, "theta must be a finite number > 0"),
        ({"xi": 0.0}, "xi must be a finite number > 0"),
        ({"v0": -0.01}, "v0 must be a finite number >= 0"),
    ],
)
def test_invalid_parameters_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Heston(**kwargs)


def test_expected_price_grows_at_mu_exactly() -> None:
    # E[exp((mu - v/2) dt + sqrt(v dt) z1) | v] = exp(mu dt), also in the discretisation.
    model = Heston(mu=0.1, v0=0.09, dt=1 / 52)
    sim = model.simulate(np.random.default_rng(0), 26, n_paths=30_000)
    terminal = sim.prices[:, -1, 0]
    expected = 100.0 * np.exp(0.1 * 0.5)
    assert abs(terminal.mean() - expected) < 4 * terminal.std() / np.sqrt(terminal.size)


def test_variance_reverts_to_theta_at_speed_kappa() -> None:
    kappa, theta, v0, dt, steps = 3.0, 0.04, 0.16, 1 / 252, 126
    sim = Heston(kappa=kappa, theta=theta, v0=v0, xi=0.2, dt=dt).simulate(
        np.random.default_rng(1), steps, n_paths=5_000
    )
    variance = sim.state["variance"][:, :, 0]
    assert np.all(variance >= 0.0)
    t = np.arange(steps + 1) * dt
    expected = theta + (v0 - theta) * np.exp(-kappa * t)
    np.testing.assert_allclose(variance.mean(axis=0), expected, rtol=0.03)


def test_price_and_variance_shocks_have_correlation_rho() -> None:
    sim = Heston(rho=-0.7, xi=0.5, dt=1 / 252).simulate(np.random.default_rng(2), 1, n_paths=50_000)
    log_return = np.log(sim.prices[:, 1, 0] / sim.prices[:, 0, 0])
    dv = sim.state["variance"][:, 1, 0] - sim.state["variance"][:, 0, 0]
    assert abs(np.corrcoef(log_return, dv)[0, 1] + 0.7) < 0.02


def test_per_asset_parameters_and_asset_correlation() -> None:
    corr = np.array([[1.0, 0.8], [0.8, 1.0]])
    sim = Heston(theta=[0.04, 0.09], v0=[0.04, 0.09], corr=corr, dt=1 / 252).simulate(
        np.random.default_rng(3), 1, n_paths=40_000
    )
    returns = np.log(sim.prices[:, 1] / sim.prices[:, 0])
    np.testing.assert_allclose(
        returns.std(axis=0), np.sqrt(np.array([0.04, 0.09]) / 252), rtol=0.03
    )
    assert abs(np.corrcoef(returns.T)[0, 1] - 0.8) < 0.02


def test_a_negative_variance_reverts_by_kappa_theta_alone_full_truncation() -> None:
    # With rho = -1 the variance shock is minus the price shock, so the raw variance v (which
    # may go negative) can be rebuilt from the prices: v' = v + kappa (theta - v+) dt + xi dW.
    mu, kappa, theta, xi, dt = 0.05, 2.0, 0.04, 1.5, 1 / 52
    model = Heston(mu=mu, kappa=kappa, theta=theta, xi=xi, rho=-1.0, dt=dt)
    sim = model.simulate(np.random.default_rng(4), 300)
    r = np.diff(np.log(sim.prices[:, 0]))
    state = sim.state["variance"][:, 0]
    v = theta
    rebuilt = [v]
    for t in range(300):
        vp = max(v, 0.0)
        shock = r[t] - (mu - 0.5 * vp) * dt  # sqrt(v+ dt) z1
        v = v + kappa * (theta - vp) * dt - xi * shock
        rebuilt.append(v)
    raw = np.array(rebuilt)
    assert (raw < 0).sum() >= 5  # the truncation is exercised
    np.testing.assert_allclose(state, np.maximum(raw, 0.0), rtol=1e-8, atol=1e-12)
