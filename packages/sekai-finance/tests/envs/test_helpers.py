"""simulate_gbm, random_correlation, sample_window."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.envs.finance import random_correlation, sample_window, simulate_gbm


def test_random_correlation_is_a_valid_fixed_matrix():
    corr = random_correlation(np.random.default_rng(0), 5)
    assert corr.shape == (5, 5) and np.allclose(corr, corr.T)
    assert np.allclose(np.diag(corr), 1.0) and np.linalg.eigvalsh(corr).min() > 0
    assert corr[3, 4] == pytest.approx(-0.396, abs=5e-4)
    with pytest.raises(ValueError):
        random_correlation(np.random.default_rng(0), 0)


def test_random_correlation_has_an_exact_unit_diagonal() -> None:
    for n in range(2, 12):
        corr = random_correlation(np.random.default_rng(n), n)
        assert np.diag(corr).tolist() == [1.0] * n


def test_random_correlation_takes_any_real_strength_but_a_bool():
    from decimal import Decimal

    expected = random_correlation(np.random.default_rng(0), 3, 0.5)
    for strength in (Decimal("0.5"), np.array(0.5), np.float32(0.5)):  # a Decimal was refused
        np.testing.assert_array_equal(
            random_correlation(np.random.default_rng(0), 3, strength), expected
        )
    for bad in (False, "0.5", np.nan):  # False was taken as 0
        with pytest.raises(ValueError, match=r"^strength must be a number in \[0, 1\)"):
            random_correlation(np.random.default_rng(0), 3, bad)


def test_simulate_gbm_shapes_and_draw_order():
    rng = np.random.default_rng(0)
    path = simulate_gbm(rng, 10, s0=50.0, mu=0.1, sigma=0.2, dt=0.01)
    assert path.shape == (11,) and path[0] == 50.0
    z = np.random.default_rng(0).standard_normal((10, 1))[:, 0]
    expected = 50.0 * np.exp(np.cumsum((0.1 - 0.02) * 0.01 + 0.2 * 0.1 * z))
    assert path[1:] == pytest.approx(expected)
    multi = simulate_gbm(rng, 5, mu=[0.0, 0.1], sigma=0.2, corr=np.eye(2))
    assert multi.shape == (6, 2)
    with pytest.raises(ValueError, match="disagree"):
        simulate_gbm(rng, 5, mu=[0.0, 0.1], sigma=[0.1, 0.2, 0.3])


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"s0": -100.0}, ValueError, "s0 must be a finite number > 0"),
        ({"dt": -1.0}, ValueError, "dt must be a finite number > 0"),
        ({"sigma": float("nan")}, ValueError, "sigma must be a finite number >= 0"),
        ({"mu": [0.0, float("inf")]}, ValueError, "mu must be finite numbers"),
        ({"n_steps": 2.5}, TypeError, "n_steps must be an int"),
        ({"n_steps": True}, TypeError, "n_steps must be an int"),
        ({"n_steps": -1}, ValueError, "n_steps must be an int >= 0"),
    ],
)
def test_simulate_gbm_checks_its_parameters_as_gbm_does(kwargs, error, says):
    args = {"n_steps": 3, **kwargs}
    n_steps = args.pop("n_steps")
    with pytest.raises(error, match=says):
        simulate_gbm(np.random.default_rng(0), n_steps, **args)


def test_simulate_gbm_zero_sigma_is_deterministic_drift():
    path = simulate_gbm(np.random.default_rng(1), 4, s0=1.0, mu=0.5, sigma=0.0, dt=0.5)
    assert path == pytest.approx(np.exp(0.25 * np.arange(5)))


def test_simulate_gbm_prices_are_s0_times_exp_of_the_summed_increments_exactly():
    # No log(s0) enters: a GBM without drift and volatility stays at s0, bit for bit, and any
    # path is GBM.simulate's expression s0 * exp(cumsum(increments)).
    still = simulate_gbm(np.random.default_rng(0), 50, s0=[100.0, 3.7, 0.1], mu=0.0, sigma=0.0)
    assert (still == [100.0, 3.7, 0.1]).all()
    rng = np.random.default_rng(5)
    path = simulate_gbm(rng, 30, s0=[100.0, 7.3], mu=[0.3, -0.1], sigma=[0.2, 0.0], dt=1 / 52)
    z = np.random.default_rng(5).standard_normal((30, 2))
    sigma = np.array([0.2, 0.0])
    increments = (np.array([0.3, -0.1]) - 0.5 * sigma**2) / 52 + sigma * np.sqrt(1 / 52) * z
    expected = np.array([100.0, 7.3]) * np.exp(np.cumsum(increments, axis=0))
    assert path[0].tolist() == [100.0, 7.3] and np.array_equal(path[1:], expected)


def test_sample_window():
    prices = np.arange(100.0)
    window = sample_window(np.random.default_rng(0), prices, 10)
    assert window.shape == (10,) and np.all(np.diff(window) == 1)
    with pytest.raises(ValueError):
        sample_window(np.random.default_rng(0), prices, 101)


def test_sample_window_draws_every_window_including_the_last() -> None:
    prices, rng = np.arange(5.0), np.random.default_rng(0)
    starts = {float(sample_window(rng, prices, 3)[0]) for _ in range(200)}
    assert starts == {0.0, 1.0, 2.0}
    assert sample_window(rng, prices, 5).tolist() == prices.tolist()


def test_simulate_gbm_of_no_steps_is_the_start_price():
    assert simulate_gbm(np.random.default_rng(0), 0, s0=50.0).tolist() == [50.0]
