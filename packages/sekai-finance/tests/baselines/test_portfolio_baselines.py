"""Portfolio-v0 baselines: the Kelly mix and its buy-and-hold."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance import random_correlation
from sekai.finance.baselines import (
    ConstantMix,
    EqualWeight,
    KellyBuyAndHold,
    RandomPolicy,
    evaluate,
    kelly_weights,
)


def defaults(n: int) -> tuple[float, np.ndarray, np.ndarray]:
    return 0.06, np.linspace(0.15, 0.35, n), random_correlation(np.random.default_rng(0), n)


def growth(w: np.ndarray, mu: float, sigma: np.ndarray, corr: np.ndarray) -> float:
    cov = np.outer(sigma, sigma) * corr
    return float(mu * w.sum() - 0.5 * w @ cov @ w)


def test_kelly_weights_for_the_defaults():
    mu, sigma, corr = defaults(5)
    w = kelly_weights(mu, sigma, corr)
    assert w == pytest.approx([0.3622, 0.2088, 0.1707, 0.1307, 0.1276], abs=5e-5)
    assert w.sum() == pytest.approx(1.0) and growth(w, mu, sigma, corr) == pytest.approx(
        0.0559, abs=5e-5
    )
    w3 = kelly_weights(*defaults(3))
    assert w3 == pytest.approx([0.6436, 0.2398, 0.1166], abs=5e-5)
    assert growth(w3, *defaults(3)) == pytest.approx(0.0527, abs=5e-5)


def test_kelly_weights_respect_the_constraints():
    mu, sigma, corr = np.array([0.1, -0.05]), np.array([0.2, 0.2]), np.eye(2)
    long_only = kelly_weights(mu, sigma, corr)
    assert long_only[1] == 0.0 and long_only.sum() <= 1.0 + 1e-12
    assert kelly_weights(mu, sigma, corr, allow_short=True) == pytest.approx([1.0, 0.0])
    shorts = kelly_weights(np.array([0.1, -0.1]), sigma, corr, allow_short=True)
    assert shorts == pytest.approx([0.5, -0.5])
    small = kelly_weights(np.array([0.01, 0.01]), sigma, corr)
    assert small == pytest.approx([0.25, 0.25])  # inside the budget: Σ⁻¹μ
    assert kelly_weights(0.06, [0.2, 0.2], np.eye(2), max_leverage=2.0) == pytest.approx([1.0, 1.0])


def test_kelly_weights_warn_when_the_solver_stops_before_converging(monkeypatch):
    import sekai.finance.baselines.portfolio as module

    mu, sigma, corr = defaults(5)
    monkeypatch.setattr(module, "_MAX_ITERATIONS", 3)
    with pytest.warns(RuntimeWarning, match=r"did not converge in 3 iterations"):
        rough = kelly_weights(mu, sigma, corr)
    assert rough.sum() <= 1.0 + 1e-12 and (rough >= 0).all()  # still a feasible mix
    monkeypatch.undo()
    kelly_weights(mu, sigma, corr)  # converges: no warning (warnings are errors here)


def test_kelly_buy_and_hold_reaches_the_bold_bar():
    mean, error = evaluate(KellyBuyAndHold(), "Portfolio-v0", 10_240, seed=7)
    assert abs(mean - 0.0537) < 4 * np.hypot(error, 0.0007), (mean, error)
    assert mean < 0.0559  # below frictionless growth


def test_kelly_buy_and_hold_on_the_migration_page_setup():
    kw = {"n_assets": 3, "episode_length": 63}
    mean, error = evaluate(KellyBuyAndHold(), "Portfolio-v0", 10_240, seed=7, **kw)
    assert abs(mean - 0.0120) < 4 * np.hypot(error, 0.0004), (mean, error)


def test_kelly_buy_and_hold_enters_once_then_trades_nothing():
    env = sekai.make("Portfolio-v0", n_assets=3, episode_length=10)
    policy = KellyBuyAndHold()
    obs = env.reset(seed=0).observation
    first = env.step(policy(obs, env))
    assert first.info["turnover"] == pytest.approx(1.0)
    for _ in range(5):
        result = env.step(policy(first.observation, env))
        assert result.info["turnover"] < 1e-12


def test_batch_policies_return_batches():
    vec = sekai.make_vec("Portfolio-v0", 4, n_assets=2)
    batch = vec.reset(seed=0).observations
    assert EqualWeight()(batch, vec).tolist() == [[1.0, 1.0, 0.0]] * 4
    assert EqualWeight(include_cash=True)(batch, vec).tolist() == [[1.0, 1.0, 1.0]] * 4
    assert ConstantMix([0.5, 0.25])(batch, vec).tolist() == [[0.5, 0.25, 0.25]] * 4
    actions = KellyBuyAndHold()(batch, vec)
    assert actions.shape == (4, 3) and actions[0, :2].sum() == pytest.approx(1.0)
    random = RandomPolicy(0)(batch, vec)
    assert random.shape == (4, 3) and ((random >= 0) & (random <= 1)).all()


def test_equal_weight_with_shorts():
    env = sekai.make("Portfolio-v0", n_assets=4, allow_short=True)
    obs = env.reset(seed=0).observation
    assert EqualWeight()(obs, env).tolist() == [0.25] * 4
    assert EqualWeight(include_cash=True)(obs, env).tolist() == pytest.approx([0.2] * 4)
    assert ConstantMix([0.5, -0.5, 0.0, 0.0])(obs, env).tolist() == [0.5, -0.5, 0.0, 0.0]


def test_equal_weight_beats_cash_on_the_default_market():
    mean, error = evaluate(EqualWeight(include_cash=True), "Portfolio-v0", 2048, seed=7)
    assert abs(mean - 0.0423) < 4 * np.hypot(error, 0.0006)


def test_kelly_buy_and_hold_reads_a_gbm_model():
    from sekai.finance.simulators import GBM

    sigma = np.array([0.2, 0.3])
    model = GBM(mu=[0.08, 0.02], sigma=sigma, corr=np.eye(2))
    expected = kelly_weights([0.08, 0.02], sigma, np.eye(2))
    single = sekai.make("Portfolio-v0", model=model)
    action = KellyBuyAndHold()(single.reset(seed=0).observation, single)
    np.testing.assert_allclose(action[:2], expected)
    independent = GBM(mu=0.1, sigma=0.2, n_assets=3)  # corr=None
    vec = sekai.make_vec("Portfolio-v0", 2, model=independent)
    actions = KellyBuyAndHold()(vec.reset(seed=0).observations, vec)
    np.testing.assert_allclose(actions, [[1 / 3, 1 / 3, 1 / 3, 0.0]] * 2)


def test_one_kelly_buy_and_hold_follows_each_envs_own_market():
    from sekai.finance.simulators import GBM

    policy = KellyBuyAndHold()
    for mu in ([0.08, 0.02], [0.02, 0.08]):
        model = GBM(mu=mu, sigma=[0.2, 0.3], corr=np.eye(2))
        env = sekai.make("Portfolio-v0", model=model)
        action = policy(env.reset(seed=0).observation, env)
        np.testing.assert_allclose(action[:2], kelly_weights(mu, [0.2, 0.3], np.eye(2)))


@pytest.mark.parametrize("mode", ["single", "native", "sync"])
def test_kelly_buy_and_hold_refuses_a_market_without_gbm_parameters(mode: str):
    from sekai.finance.simulators import Heston

    history = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (600, 2)), 0))
    sources = [({"prices": history}, "replays a price history"), ({"model": Heston()}, "Heston")]
    for kwargs, match in sources:
        if mode == "single":
            env = sekai.make("Portfolio-v0", **kwargs)
        else:
            env = sekai.make_vec("Portfolio-v0", 2, vectorization_mode=mode, **kwargs)
        with pytest.raises(ValueError, match=match):
            KellyBuyAndHold()(None, env)
