"""Tests for Randomized: a model per path, the reference and consistency checks."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GBM, Heston, Randomized


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
