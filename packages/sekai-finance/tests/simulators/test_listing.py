"""Tests for ListingProcess: the listing chains, the minimum and NaN prices."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GBM, ListingProcess


def test_listing_probability_follows_the_two_state_chain() -> None:
    dt = 1 / 12
    model = ListingProcess(
        GBM(n_assets=50, dt=dt),
        initial_listed=0.3,
        listing_rate=2.0,
        delisting_rate=1.0,
        min_listed=0,
    )
    sim = model.simulate(np.random.default_rng(0), 24, n_paths=200)
    assert sim.mask is not None
    p_on, p_off = 1 - np.exp(-2.0 * dt), 1 - np.exp(-1.0 * dt)
    stationary = p_on / (p_on + p_off)
    t = np.arange(25)
    expected = stationary + (0.3 - stationary) * (1 - p_on - p_off) ** t
    np.testing.assert_allclose(sim.mask.mean(axis=(0, 2)), expected, atol=0.01)


def test_prices_are_nan_exactly_where_unlisted() -> None:
    model = ListingProcess(GBM(n_assets=6), initial_listed=0.5, delisting_rate=5.0, min_listed=0)
    sim = model.simulate(np.random.default_rng(1), 100, n_paths=4)
    assert sim.mask is not None
    np.testing.assert_array_equal(np.isnan(sim.prices), ~sim.mask)
    inner = GBM(n_assets=6).simulate(np.random.default_rng(1), 100, n_paths=4).prices
    np.testing.assert_array_equal(sim.prices[sim.mask], inner[sim.mask])


def test_minimum_lists_the_lowest_index_assets() -> None:
    model = ListingProcess(GBM(n_assets=5), initial_listed=0.0, listing_rate=0.0, min_listed=2)
    sim = model.simulate(np.random.default_rng(2), 10)
    assert sim.mask is not None
    np.testing.assert_array_equal(sim.mask, np.tile([True, True, False, False, False], (11, 1)))


def test_minimum_holds_at_every_row() -> None:
    model = ListingProcess(GBM(n_assets=4), initial_listed=0.2, delisting_rate=20.0, min_listed=3)
    sim = model.simulate(np.random.default_rng(3), 200, n_paths=5)
    assert sim.mask is not None
    assert sim.mask.sum(axis=-1).min() >= 3


def test_nested_masks_are_combined() -> None:
    inner = ListingProcess(GBM(n_assets=3), initial_listed=0.5, min_listed=0)
    outer = ListingProcess(inner, initial_listed=0.5, min_listed=0)
    sim = outer.simulate(np.random.default_rng(4), 20, n_paths=50)
    assert sim.mask is not None
    assert sim.mask.mean() < 0.5
    np.testing.assert_array_equal(np.isnan(sim.prices), ~sim.mask)


def test_online_stepper_matches_the_chain() -> None:
    model = ListingProcess(
        GBM(n_assets=20, dt=0.1), initial_listed=1.0, delisting_rate=3.0, min_listed=0
    )
    stepper = model.stepper(200)
    rng = np.random.default_rng(5)
    stepper.reset(rng)
    assert stepper.mask.all()
    for _ in range(5):
        stepper.step(rng)
    p_on, p_off = 1 - np.exp(-0.1), 1 - np.exp(-0.3)
    stationary = p_on / (p_on + p_off)
    expected = stationary + (1.0 - stationary) * (1 - p_on - p_off) ** 5
    assert abs(stepper.mask.mean() - expected) < 0.02
    np.testing.assert_array_equal(np.isnan(stepper.prices), ~stepper.mask)


def test_online_step_returns_nan_for_an_asset_listing_during_it_and_skips_inactive_paths() -> None:
    model = ListingProcess(GBM(n_assets=3), initial_listed=0.0, listing_rate=1e9, min_listed=0)
    stepper = model.stepper(2)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    assert not stepper.mask.any()
    log_returns = stepper.step(rng, np.array([True, False]))
    # path 0 listed every asset during the step: no return from an unlisted price
    assert stepper.mask.tolist() == [[True] * 3, [False] * 3]  # path 1 did not move
    assert np.isnan(log_returns).all()
    log_returns = stepper.step(rng)
    assert np.isfinite(log_returns[0]).all() and np.isnan(log_returns[1]).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"initial_listed": 1.5},
            ValueError,
            r"initial_listed must be a finite number in \[0, 1\]",
        ),
        ({"listing_rate": -1.0}, ValueError, "listing_rate must be a finite number >= 0"),
        ({"delisting_rate": np.inf}, ValueError, "delisting_rate must be a finite number >= 0"),
        ({"min_listed": 4}, ValueError, r"min_listed must be between 0 and n_assets \(3\)"),
        ({"min_listed": -1}, ValueError, "min_listed must be an int >= 0"),
    ],
)
def test_invalid_parameters_are_refused(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ListingProcess(GBM(n_assets=3), **kwargs)  # type: ignore[arg-type]


def test_model_must_be_a_market_model() -> None:
    with pytest.raises(TypeError, match="model must be a MarketModel"):
        ListingProcess("GBM")  # type: ignore[arg-type]


def test_default_market_is_a_listed_regime_switching_universe() -> None:
    from sekai.envs.finance import default_market

    model = default_market()
    assert model.n_assets == 10 and model.min_listed == 2
    assert (model.initial_listed, model.listing_rate, model.delisting_rate) == (0.7, 1.0, 0.3)
    np.testing.assert_allclose(model.model.initial, [0.8, 0.2], atol=1e-12)
    calm, stress = model.model.regimes
    assert calm.corr[0, 1] == 0.2 and stress.corr[0, 1] == 0.7
    sim = model.simulate(np.random.default_rng(0), 50, n_paths=3)
    assert sim.mask is not None and sim.mask.sum(axis=-1).min() >= 2
    assert default_market(1).min_listed == 1
