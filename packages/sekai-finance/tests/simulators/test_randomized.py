"""Tests for Randomized: a model per path, the reference and consistency checks."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable

import numpy as np
import pytest

from sekai.finance.simulators import GARCH, GBM, Heston, ListingProcess, MarketModel, Randomized


def _vol_factory(rng: np.random.Generator) -> GBM:
    return GBM(sigma=rng.uniform(0.05, 0.6), dt=1 / 252)


def test_reference_is_the_model_for_default_rng_0() -> None:
    model = Randomized(_vol_factory)
    expected = _vol_factory(np.random.default_rng(0))
    assert repr(model.reference) == repr(expected)
    assert model.n_assets == 1 and model.dt == 1 / 252
    assert repr(model).startswith("Randomized(factory=_vol_factory, reference=GBM(")


def test_each_path_gets_its_own_parameters() -> None:
    sim = Randomized(_vol_factory).simulate(np.random.default_rng(0), 500, n_paths=40)
    vols = np.diff(np.log(sim.prices[..., 0]), axis=1).std(axis=1) * np.sqrt(252)
    assert vols.min() < 0.2 and vols.max() > 0.4


def test_state_is_stacked_across_paths() -> None:
    model = Randomized(lambda rng: Heston(kappa=rng.uniform(1.0, 3.0)))
    sim = model.simulate(np.random.default_rng(0), 5, n_paths=3)
    assert sim.state["variance"].shape == (3, 6, 1)


def test_models_that_do_not_match_the_reference_are_refused() -> None:
    def factory(rng: np.random.Generator) -> GBM:
        return GBM(n_assets=1 if rng.random() < 0.64 else 2)

    model = Randomized(factory)  # the reference (default_rng(0): 0.637) has one asset
    with pytest.raises(ValueError, match="match the reference's n_assets and dt"):
        model.simulate(np.random.default_rng(1), 3, n_paths=20)


def test_models_with_another_dt_than_the_reference_are_refused() -> None:
    def factory(rng: np.random.Generator) -> GBM:
        return GBM(dt=1 / 252 if rng.random() < 0.64 else 1 / 12)

    model = Randomized(factory)  # the reference (default_rng(0): 0.637) steps daily
    with pytest.raises(ValueError, match=r"n_assets and dt \(1, 0.003968.*\); got \(1, 0.0833"):
        model.simulate(np.random.default_rng(1), 3, n_paths=20)


def test_factory_must_build_a_model() -> None:
    with pytest.raises(TypeError, match="must return a MarketModel"):
        Randomized(lambda rng: 3)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="callable"):
        Randomized(3)  # type: ignore[arg-type]


def test_randomized_needs_a_horizon_to_step_online() -> None:
    model = Randomized(_vol_factory)
    with pytest.raises(ValueError, match="horizon"):
        model.stepper(2)
    stepper = model.stepper(2, horizon=3)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    assert stepper.step(rng).shape == (2, 1)


def in_turn(models: Iterable[object]) -> Callable[[np.random.Generator], MarketModel]:
    """A factory handing out ``models`` in turn (the first call builds the reference)."""
    handed = iter(models)
    return lambda rng: next(handed)  # type: ignore[return-value]


def listed_and_plain() -> Callable[[np.random.Generator], MarketModel]:
    """A factory alternating a ListingProcess (a mask) and a plain GBM (none), listing first."""
    listing = ListingProcess(GBM(n_assets=3), initial_listed=0.5)
    return in_turn(itertools.cycle([listing, GBM(n_assets=3)]))


def test_paths_with_and_without_a_listing_mask_stack_into_one_mask() -> None:
    sim = Randomized(listed_and_plain()).simulate(np.random.default_rng(1), 5, n_paths=6)
    assert sim.mask is not None and sim.mask.shape == (6, 6, 3)
    np.testing.assert_array_equal(sim.mask, np.isfinite(sim.prices))
    assert sim.mask[0::2].all()  # the plain GBM paths: every asset listed
    assert not sim.mask.all()


def test_a_path_stepper_follows_the_mask_of_the_paths_it_resets() -> None:
    stepper = Randomized(listed_and_plain()).stepper(2, horizon=5)
    assert stepper.mask is None  # nothing simulated yet
    rng = np.random.default_rng(0)
    stepper.reset(rng)  # path 0 plain, path 1 listing
    assert stepper.mask is not None and stepper.mask.shape == (2, 3)
    assert stepper.mask.tolist() == [[True, True, True], [False, True, True]]
    np.testing.assert_array_equal(stepper.mask, np.isfinite(stepper.prices))
    stepper.reset(rng, indices=[1])  # a plain path now: every asset listed again
    assert stepper.mask.tolist() == [[True, True, True], [True, True, True]]
    stepper.step(rng)
    prices = stepper.prices.copy()
    stepper.reset(rng, indices=[])  # no path: nothing simulated, no path back at its start
    np.testing.assert_array_equal(stepper.prices, prices)
    for _ in range(4):
        stepper.step(rng)
    message = "a path ran past its horizon of 5 steps; reset it first"
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        stepper.step(rng)


def test_a_factory_model_with_another_state_spec_is_refused() -> None:
    model = Randomized(in_turn([GARCH(), GBM()]))
    message = (
        "every model built by factory must have the reference's state_spec "
        "{'variance': (1,)}, got {}"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        model.simulate(np.random.default_rng(0), 3)


def test_a_factory_that_stops_building_models_is_refused() -> None:
    model = Randomized(in_turn([GBM(), 3]))
    message = "factory(rng) must return a MarketModel, got int"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        model.simulate(np.random.default_rng(0), 3)
