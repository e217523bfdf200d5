"""Tests for RegimeSwitching: the hidden chain and the per-regime increments."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.simulators import GBM, RegimeSwitching

P = np.array([[1 - 1 / 504, 1 / 504], [1 / 126, 1 - 1 / 126]])


def test_initial_defaults_to_the_stationary_distribution() -> None:
    model = RegimeSwitching([GBM(0.08, 0.15), GBM(-0.2, 0.4)], P)
    np.testing.assert_allclose(model.initial, [0.8, 0.2], atol=1e-12)
    np.testing.assert_allclose(model.initial @ P, model.initial, atol=1e-12)


def test_regime_frequencies_and_transitions_follow_the_matrix() -> None:
    transition = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.3, 0.0, 0.7]])
    model = RegimeSwitching([GBM(), GBM(), GBM()], transition, initial=[1.0, 0.0, 0.0])
    sim = model.simulate(np.random.default_rng(0), 200, n_paths=200)
    regime = sim.state["regime"].astype(int)
    assert np.all(regime[:, 0] == 0)
    counts = np.zeros((3, 3))
    np.add.at(counts, (regime[:, :-1].ravel(), regime[:, 1:].ravel()), 1)
    rows = counts.sum(axis=1, keepdims=True)
    standard_error = np.sqrt(transition * (1 - transition) / rows)
    assert np.all(np.abs(counts / rows - transition) <= 4 * standard_error + 1e-12)


def test_each_regime_drives_the_following_increment() -> None:
    calm, stress = GBM(0.0, 0.1, dt=1 / 252), GBM(0.0, 0.5, dt=1 / 252)
    model = RegimeSwitching([calm, stress], [[0.95, 0.05], [0.05, 0.95]])
    sim = model.simulate(np.random.default_rng(1), 20_000)
    returns = np.diff(np.log(sim.prices[:, 0]))
    regime = sim.state["regime"][:-1]
    for index, vol in ((0, 0.1), (1, 0.5)):
        measured = returns[regime == index].std()
        assert abs(measured / (vol / np.sqrt(252)) - 1.0) < 0.04


def test_online_stepper_tracks_the_regime() -> None:
    model = RegimeSwitching([GBM(sigma=0.1), GBM(sigma=0.4)], P)
    stepper = model.stepper(5_000)
    rng = np.random.default_rng(2)
    stepper.reset(rng)
    assert abs(stepper.state["regime"].mean() - 0.2) < 0.03
    for _ in range(10):
        stepper.step(rng)
    assert set(np.unique(stepper.state["regime"])) <= {0.0, 1.0}


@pytest.mark.parametrize(
    ("regimes", "transition", "initial", "message"),
    [
        ([GBM(), GBM(n_assets=2)], P, None, "share n_assets"),
        ([GBM(), GBM(dt=0.1)], P, None, "share dt"),
        ([GBM(), GBM(s0=50.0)], P, None, "share s0"),
        ([GBM()], [[0.5, 0.5]], None, r"shape \(1, 1\)"),
        ([GBM(), GBM()], [[0.5, 0.6], [0.5, 0.5]], None, "row-stochastic"),
        ([GBM(), GBM()], [[1.5, -0.5], [0.5, 0.5]], None, "row-stochastic"),
        ([GBM(), GBM()], P, [0.5, 0.6], "distribution over the 2 regimes"),
        ([GBM(), GBM()], P, [0.5, 0.45], "distribution over the 2 regimes"),
        ([], P, None, "non-empty sequence of GBM"),
    ],
)
def test_invalid_arguments_are_refused(
    regimes: list[GBM], transition: object, initial: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RegimeSwitching(regimes, transition, initial=initial)  # type: ignore[arg-type]
