"""Tests for MarketModel, Simulation and the online steppers common to every model."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest

from sekai.finance.simulators import (
    GARCH,
    GBM,
    BlockBootstrap,
    CointegratedPair,
    Heston,
    ListingProcess,
    MarketModel,
    MeanReverting,
    MertonJumpDiffusion,
    PathStepper,
    Randomized,
    RegimeSwitching,
    Simulation,
)


def _models() -> list[MarketModel]:
    history = np.random.default_rng(1).normal(0.0, 0.01, (60, 2))
    return [
        GBM(mu=0.06, sigma=[0.1, 0.2, 0.3], corr=np.eye(3)),
        Heston(n_assets=2),
        MertonJumpDiffusion(),
        RegimeSwitching([GBM(0.1, 0.1), GBM(-0.1, 0.3)], [[0.9, 0.1], [0.2, 0.8]]),
        GARCH(n_assets=2),
        MeanReverting(),
        CointegratedPair(),
        BlockBootstrap(history, block_size=7),
        Randomized(lambda rng: GBM(sigma=rng.uniform(0.1, 0.3))),
        ListingProcess(GBM(n_assets=4), min_listed=2),
    ]


MODELS = _models()
IDS = [type(m).__name__ for m in MODELS]
# Randomized builds its per-path models from a lambda (no pickling) and has no online stepper.
ONLINE = [m for m in MODELS if not isinstance(m, Randomized)]
ONLINE_IDS = [type(m).__name__ for m in ONLINE]


class UserModel(MarketModel):
    """A user model that only implements simulate (a deterministic ramp plus noise)."""

    n_assets = 2
    dt = 0.01

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        return {"level": ()}

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        k = 1 if n_paths is None else n_paths
        noise = rng.random((k, 1, 1))
        prices = 100.0 + np.arange(n_steps + 1)[None, :, None] + noise + np.zeros((1, 1, 2))
        level = prices[..., 0]
        if n_paths is None:
            return Simulation(prices[0], None, {"level": level[0]})
        return Simulation(prices, None, {"level": level})


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_simulate_shapes_follow_n_paths(model: MarketModel) -> None:
    rng = np.random.default_rng(0)
    single = model.simulate(rng, 12)
    batch = model.simulate(rng, 12, n_paths=3)
    assert single.prices.shape == (13, model.n_assets)
    assert batch.prices.shape == (3, 13, model.n_assets)
    assert single.n_paths is None and batch.n_paths == 3 and batch.n_steps == 12
    assert set(batch.state) == set(model.state_spec())
    for name, shape in model.state_spec().items():
        assert batch.state[name].shape == (3, 13, *shape)
        assert single.state[name].shape == (13, *shape)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_simulate_is_reproducible_for_a_seed(model: MarketModel) -> None:
    a = model.simulate(np.random.default_rng(5), 30, n_paths=4)
    b = model.simulate(np.random.default_rng(5), 30, n_paths=4)
    c = model.simulate(np.random.default_rng(6), 30, n_paths=4)
    np.testing.assert_array_equal(a.prices, b.prices)
    assert not np.array_equal(np.nan_to_num(a.prices), np.nan_to_num(c.prices))


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_simulate_starts_at_the_initial_prices(model: MarketModel) -> None:
    sim = model.simulate(np.random.default_rng(0), 5, n_paths=6)
    first = sim.prices[:, 0]
    listed = np.isfinite(first)
    assert listed.any()
    np.testing.assert_allclose(first[listed], 100.0)  # every model here starts at s0 = 100


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_builtin_models_are_immutable(model: MarketModel) -> None:
    with pytest.raises(AttributeError, match="build a new model"):
        model.dt = 0.5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="build a new model"):
        model.n_assets = 3  # type: ignore[misc]


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_builtin_model_attributes_cannot_be_deleted(model: MarketModel) -> None:
    message = f"{type(model).__name__} is immutable: build a new model with the parameters you want"
    with pytest.raises(AttributeError, match=f"^{re.escape(message)}$"):
        del model.dt
    assert model.dt > 0


CORR = np.array([[1.0, 0.9], [0.9, 1.0]])
CORRELATED = [
    GARCH(corr=CORR),
    MeanReverting(corr=CORR),
    MertonJumpDiffusion(corr=CORR, jump_intensity=0.0),
]


@pytest.mark.parametrize("model", CORRELATED, ids=[type(m).__name__ for m in CORRELATED])
def test_correlated_shocks_correlate_the_returns_of_simulate_and_of_the_stepper(
    model: MarketModel,
) -> None:
    paths = 20_000  # the sample correlation's standard error is about 0.0013
    prices = model.simulate(np.random.default_rng(0), 2, n_paths=paths).prices
    simulated = np.diff(np.log(prices), axis=1).reshape(-1, 2)
    stepper = model.stepper(paths)
    rng = np.random.default_rng(1)
    stepper.reset(rng)
    stepped = np.concatenate([stepper.step(rng) for _ in range(2)])
    for returns in (simulated, stepped):
        assert np.corrcoef(returns.T)[0, 1] == pytest.approx(0.9, abs=0.01)


@pytest.mark.parametrize("model", ONLINE, ids=ONLINE_IDS)
def test_models_survive_pickle_and_deepcopy(model: MarketModel) -> None:
    for clone in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        a = model.simulate(np.random.default_rng(3), 8, n_paths=2)
        b = clone.simulate(np.random.default_rng(3), 8, n_paths=2)
        np.testing.assert_array_equal(a.prices, b.prices)
        assert repr(clone) == repr(model)


def test_per_asset_parameter_arrays_are_read_only() -> None:
    model = GBM(sigma=[0.1, 0.2])
    assert isinstance(model.sigma, np.ndarray)
    with pytest.raises(ValueError, match="read-only"):
        model.sigma[0] = 1.0


@pytest.mark.parametrize("bad", [True, 2.0, "3", None])
def test_simulate_refuses_non_int_n_steps(bad: object) -> None:
    with pytest.raises(TypeError, match="n_steps must be an int >= 1"):
        GBM().simulate(np.random.default_rng(0), bad)  # type: ignore[arg-type]


def test_simulate_refuses_zero_steps_and_bool_paths() -> None:
    with pytest.raises(ValueError, match="n_steps must be an int >= 1, got 0"):
        GBM().simulate(np.random.default_rng(0), 0)
    with pytest.raises(TypeError, match="n_paths"):
        GBM().simulate(np.random.default_rng(0), 3, n_paths=True)


def test_simulate_refuses_a_seed_instead_of_a_generator() -> None:
    with pytest.raises(TypeError, match="default_rng"):
        GBM().simulate(0, 3)  # type: ignore[arg-type]


def test_simulation_validates_shapes() -> None:
    with pytest.raises(ValueError, match="prices must have shape"):
        Simulation(np.ones(5))
    with pytest.raises(ValueError, match="mask must be a bool array"):
        Simulation(np.ones((5, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="mask must be a bool array"):
        Simulation(np.ones((5, 2)), np.ones((4, 2), bool))
    with pytest.raises(ValueError, match="leading axes"):
        Simulation(np.ones((5, 2)), None, {"x": np.ones(4)})
    sim = Simulation(np.ones((2, 5, 3)), np.ones((2, 5, 3), bool), {"x": np.zeros((2, 5, 4))})
    assert sim.n_assets == 3 and sim.path(1).prices.shape == (5, 3)


def test_simulation_is_frozen() -> None:
    sim = Simulation(np.ones((3, 1)))
    with pytest.raises(AttributeError):
        sim.prices = np.zeros((3, 1))  # type: ignore[misc]


def test_user_model_stepper_needs_a_horizon() -> None:
    with pytest.raises(ValueError, match="horizon"):
        UserModel().stepper(3)


def test_path_stepper_replays_simulated_paths() -> None:
    model = UserModel()
    stepper = model.stepper(3, horizon=4)
    assert isinstance(stepper, PathStepper)
    stepper.reset(np.random.default_rng(0))
    expected = model.simulate(np.random.default_rng(0), 4, n_paths=3)
    np.testing.assert_array_equal(stepper.prices, expected.prices[:, 0])
    returns = stepper.step(np.random.default_rng(1))
    np.testing.assert_allclose(returns, np.log(expected.prices[:, 1] / expected.prices[:, 0]))
    np.testing.assert_array_equal(stepper.state["level"], expected.state["level"][:, 1])


def test_path_stepper_keeps_inactive_paths_and_stops_at_the_horizon() -> None:
    stepper = UserModel().stepper(2, horizon=2)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    before = stepper.prices.copy()
    returns = stepper.step(rng, np.array([True, False]))
    assert returns[1].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(stepper.prices[1], before[1])
    assert stepper.steps.tolist() == [1, 0]
    stepper.step(rng)
    with pytest.raises(RuntimeError, match="horizon"):
        stepper.step(rng)
    stepper.reset(rng, [0])
    assert stepper.steps.tolist() == [0, 1]


@pytest.mark.parametrize("model", ONLINE, ids=ONLINE_IDS)
def test_online_stepper_keeps_inactive_paths(model: MarketModel) -> None:
    stepper = model.stepper(4)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    first = stepper.prices
    state = stepper.state
    active = np.array([True, False, True, False])
    returns = stepper.step(rng, active)
    assert returns.shape == (4, model.n_assets)
    listed = np.ones(returns.shape, bool) if stepper.mask is None else stepper.mask
    np.testing.assert_array_equal(returns[~active & listed.all(axis=1)], 0.0)
    assert np.array_equal(np.isnan(returns), ~listed | np.isnan(first))
    np.testing.assert_array_equal(stepper.prices[~active], first[~active])
    for name, value in stepper.state.items():
        np.testing.assert_array_equal(value[~active], state[name][~active])
    assert stepper.steps.tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize("model", ONLINE, ids=ONLINE_IDS)
def test_online_stepper_hands_out_arrays_it_never_changes(model: MarketModel) -> None:
    stepper = model.stepper(3)
    rng = np.random.default_rng(0)
    stepper.reset(rng)
    held = stepper.prices
    copy_ = held.copy()
    stepper.step(rng)
    stepper.reset(rng, [1])
    np.testing.assert_array_equal(held, copy_)
    with pytest.raises(ValueError, match="read-only"):
        stepper.prices[0, 0] = 1.0


@pytest.mark.parametrize(
    "model",
    [
        m
        for m in MODELS
        if isinstance(m, (Heston, GARCH, MeanReverting, CointegratedPair, RegimeSwitching))
    ],
    ids=lambda m: type(m).__name__,
)
def test_online_stepper_reproduces_simulate_draw_for_draw(model: MarketModel) -> None:
    sim = model.simulate(np.random.default_rng(9), 20, n_paths=5)
    stepper = model.stepper(5)
    rng = np.random.default_rng(9)
    stepper.reset(rng)
    for _ in range(20):
        stepper.step(rng)
    np.testing.assert_allclose(stepper.prices, sim.prices[:, -1], rtol=1e-12)
    for name, value in stepper.state.items():
        np.testing.assert_allclose(value, sim.state[name][:, -1], rtol=1e-12)
