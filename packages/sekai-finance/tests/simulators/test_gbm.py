"""Tests for GBM: closed-form moments, draw order, validation and online simulation."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GBM


def test_repr_is_compact() -> None:
    model = GBM(mu=0.06, sigma=np.linspace(0.15, 0.35, 5))
    assert repr(model) == "GBM(n_assets=5, mu=0.06, sigma=[...], s0=100.0, corr=None, dt=1/252)"
    assert repr(GBM(dt=0.3)) == "GBM(n_assets=1, mu=0.0, sigma=0.2, s0=100.0, corr=None, dt=0.3)"


def test_n_assets_is_inferred_from_corr_and_arrays() -> None:
    assert GBM(corr=np.eye(3)).n_assets == 3
    assert GBM(s0=[1.0, 2.0]).n_assets == 2
    assert GBM(n_assets=4).n_assets == 4


def test_n_assets_that_disagrees_is_refused() -> None:
    with pytest.raises(ValueError, match="leave n_assets out"):
        GBM(sigma=[0.1, 0.2], n_assets=3)
    with pytest.raises(ValueError, match="disagree"):
        GBM(sigma=[0.1, 0.2], mu=[0.0, 0.1, 0.2])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": -1.0}, "sigma must be a finite number >= 0, got -1.0"),
        ({"sigma": [0.1, -0.1]}, r"sigma must be finite numbers >= 0, got \[0.1, -0.1\]"),
        ({"mu": float("nan")}, "mu must be a finite number, got nan"),
        ({"s0": 0.0}, "s0 must be a finite number > 0, got 0.0"),
        ({"dt": 0.0}, "dt must be a finite number > 0, got 0.0"),
        ({"sigma": True}, "sigma must be a finite number >= 0, got bool"),
        ({"corr": np.ones((2, 3))}, "corr must be a square"),
        ({"corr": [[1.0, 0.5], [0.4, 1.0]]}, "symmetric"),
        ({"corr": [[2.0, 0.5], [0.5, 1.0]]}, "unit diagonal"),
        ({"corr": [[1.0, 1.0], [1.0, 1.0]]}, "positive definite"),
        ({"corr": [[1.0, np.nan], [np.nan, 1.0]]}, "finite"),
    ],
)
def test_invalid_parameters_are_refused_with_their_name(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        GBM(**kwargs)  # type: ignore[arg-type]


def test_simulate_draws_one_correlated_normal_block() -> None:
    corr = np.array([[1.0, 0.3], [0.3, 1.0]])
    model = GBM(mu=[0.05, 0.1], sigma=[0.2, 0.3], corr=corr, dt=1 / 52)
    sim = model.simulate(np.random.default_rng(4), 6)
    z = np.random.default_rng(4).standard_normal((6, 2)) @ np.linalg.cholesky(corr).T
    increments = (np.array([0.05, 0.1]) - 0.5 * np.array([0.2, 0.3]) ** 2) / 52 + z * np.array(
        [0.2, 0.3]
    ) * np.sqrt(1 / 52)
    expected = 100.0 * np.exp(np.vstack([np.zeros(2), np.cumsum(increments, axis=0)]))
    np.testing.assert_allclose(sim.prices, expected, rtol=1e-12)


def test_terminal_price_moments_match_the_lognormal_closed_form() -> None:
    mu, sigma, dt, steps = 0.08, 0.3, 1 / 12, 12
    sim = GBM(mu, sigma, dt=dt).simulate(np.random.default_rng(0), steps, n_paths=40_000)
    terminal = sim.prices[:, -1, 0]
    t = steps * dt
    mean = 100.0 * np.exp(mu * t)
    sd = mean * np.sqrt(np.expm1(sigma**2 * t))
    assert abs(terminal.mean() - mean) < 4 * sd / np.sqrt(terminal.size)
    log_returns = np.log(terminal / 100.0)
    assert abs(log_returns.var() - sigma**2 * t) < 0.03 * sigma**2 * t
    assert abs(log_returns.mean() - (mu - 0.5 * sigma**2) * t) < 4 * sigma * np.sqrt(t / 40_000)


def test_increments_have_the_requested_correlation() -> None:
    corr = np.array([[1.0, -0.6, 0.2], [-0.6, 1.0, 0.1], [0.2, 0.1, 1.0]])
    sim = GBM(sigma=[0.1, 0.2, 0.4], corr=corr).simulate(np.random.default_rng(1), 20_000)
    increments = np.diff(np.log(sim.prices), axis=0)
    np.testing.assert_allclose(np.corrcoef(increments.T), corr, atol=0.03)


def test_zero_volatility_is_deterministic() -> None:
    sim = GBM(mu=0.1, sigma=0.0, dt=0.5).simulate(np.random.default_rng(0), 4, n_paths=2)
    np.testing.assert_allclose(
        sim.prices[:, :, 0], 100.0 * np.exp(0.1 * 0.5 * np.arange(5)) + np.zeros((2, 1))
    )


def test_online_stepper_matches_the_closed_form() -> None:
    model = GBM(mu=[0.1, -0.2], sigma=[0.2, 0.5], corr=[[1.0, 0.5], [0.5, 1.0]], dt=0.1)
    stepper = model.stepper(20_000)
    rng = np.random.default_rng(2)
    stepper.reset(rng)
    total = np.zeros((20_000, 2))
    for _ in range(5):
        total += stepper.step(rng)
    np.testing.assert_allclose(np.log(stepper.prices / 100.0), total, rtol=1e-10, atol=1e-12)
    t = 0.5
    np.testing.assert_allclose(
        total.mean(axis=0),
        (np.array([0.1, -0.2]) - 0.5 * np.array([0.2, 0.5]) ** 2) * t,
        atol=0.015,
    )
    np.testing.assert_allclose(total.std(axis=0), np.array([0.2, 0.5]) * np.sqrt(t), rtol=0.03)
    assert abs(np.corrcoef(total.T)[0, 1] - 0.5) < 0.03


def test_online_reset_restarts_only_the_given_paths() -> None:
    stepper = GBM().stepper(3)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    stepper.step(rng)
    moved = stepper.prices.copy()
    stepper.reset(rng, np.array([1]))
    assert stepper.prices[1, 0] == 100.0
    np.testing.assert_array_equal(stepper.prices[[0, 2]], moved[[0, 2]])
    assert stepper.steps.tolist() == [1, 0, 1]
