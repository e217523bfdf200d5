"""Market-v0 baselines: the volatility filter and the regime oracle, and the filter's score."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.market import MarketEnv
from sekai.finance.baselines._evaluate import evaluate
from sekai.finance.baselines.market import RegimeOracle, VolatilityFilter
from sekai.finance.simulators.base import MarketModel, Simulation


def observation(returns: np.ndarray, mask: list[int]) -> dict[str, Any]:
    """A Market-v0 observation with the given per-slot returns ``(S, L)``, all available."""
    values = np.stack([returns, np.ones_like(returns)], axis=-1).astype(np.float32)
    values[np.array(mask) == 0] = 0.0
    return {"assets": {"values": values, "mask": np.array(mask, np.int8)}}


def test_quiet_market_gets_equal_weight_on_tradable_slots() -> None:
    env = MarketEnv(max_assets=3, model=sekai.finance.GBM(n_assets=3))
    obs = observation(np.full((3, 20), 0.001), [1, 0, 1])
    assert VolatilityFilter()(obs, env).tolist() == [1.0, 0.0, 1.0, 0.0]


def test_volatile_market_goes_to_cash() -> None:
    env = MarketEnv(max_assets=3, model=sekai.finance.GBM(n_assets=3))
    returns = np.tile(np.array([0.03, -0.03] * 10), (3, 1))
    obs = observation(returns, [1, 1, 1])
    assert VolatilityFilter().volatility(obs) == pytest.approx(0.03)
    assert VolatilityFilter()(obs, env).tolist() == [0.0, 0.0, 0.0, 1.0]
    assert VolatilityFilter(threshold=0.05)(obs, env).tolist() == [1.0, 1.0, 1.0, 0.0]


def test_volatility_is_the_std_of_the_equal_weight_portfolio() -> None:
    rng = np.random.default_rng(0)
    returns = rng.normal(0, 0.01, (4, 20))
    obs = observation(returns, [1, 1, 0, 1])
    expected = returns[[0, 1, 3]].mean(axis=0).std()
    assert VolatilityFilter().volatility(obs) == pytest.approx(expected, rel=1e-5)


def test_volatility_counts_a_return_only_where_the_slot_was_available() -> None:
    rng = np.random.default_rng(1)
    returns = rng.normal(0, 0.01, (3, 20))
    available = np.ones((3, 20))
    available[1, :12] = 0.0  # slot 1 listed only for the last 8 rows of the lookback
    values = np.stack([returns, available], axis=-1).astype(np.float32)
    obs = {"assets": {"values": values, "mask": np.array([1, 1, 1], np.int8)}}
    expected = (values[..., 0] * values[..., 1]).astype(np.float64).mean(axis=0).std()
    assert VolatilityFilter().volatility(obs) == pytest.approx(expected, rel=1e-6)


def test_long_short_weights_split_over_the_tradable_slots_only() -> None:
    env = MarketEnv(max_assets=3, allow_short=True, model=sekai.finance.GBM(n_assets=3))
    obs = observation(np.zeros((3, 20)), [1, 0, 1])
    assert VolatilityFilter()(obs, env).tolist() == [0.5, 0.0, 0.5]


def test_long_short_accounts_get_equal_target_weights() -> None:
    env = MarketEnv(max_assets=2, allow_short=True, model=sekai.finance.GBM(n_assets=2))
    obs = observation(np.zeros((2, 20)), [1, 1])
    assert VolatilityFilter()(obs, env).tolist() == [0.5, 0.5]


def test_filter_returns_a_batch_for_a_vector_env() -> None:
    vec = sekai.make_vec("Market-v0", 3)
    result = vec.reset(seed=0)
    actions = VolatilityFilter()(result.observations, vec)
    assert actions.shape == (3, 11)
    mask = result.observations["assets"]["mask"]
    for row, tradable in zip(actions, mask):
        assert row.tolist() in ([*tradable.tolist(), 0], [0] * 10 + [1])
    vec.step(actions)
    vec.close()


def test_oracle_reads_the_regime_from_the_env_or_from_the_observation() -> None:
    hidden = MarketEnv(privileged_state=True)
    observed = MarketEnv(exogenous=("regime",))
    oracle = RegimeOracle()
    seen = set()
    for seed in range(6):
        a: Any = hidden.reset(seed=seed)
        b: Any = observed.reset(seed=seed)
        for _ in range(40):
            regime = float(a.info["state"]["regime"])
            seen.add(regime)
            action = oracle(a.observation, hidden)
            assert action.tolist() == oracle(b.observation, observed).tolist()
            assert action[-1] == (0.0 if regime == 0 else 1.0)
            a, b = hidden.step(action), observed.step(action)
    assert seen == {0.0, 1.0}


def two_regimes(rows: int) -> np.ndarray:
    """Regime 0 for five rows, then 1 for five rows, and so on."""
    return (np.arange(rows) // 5 % 2).astype(np.float64)


RATE = (0.01, 7.0)  # a two-column series observed before the regime: never a regime value


class RateAndRegimeModel(MarketModel):
    """Three GBM assets with a latent ``rate`` (2 columns) and a ``regime`` (0/1 every 5 rows)."""

    n_assets = 3
    dt = 1 / 252

    def state_spec(self) -> dict[str, tuple[int, ...]]:
        return {"rate": (2,), "regime": ()}

    def simulate(
        self, rng: np.random.Generator, n_steps: int, *, n_paths: int | None = None
    ) -> Simulation:
        prices = sekai.finance.GBM(n_assets=3).simulate(rng, n_steps, n_paths=n_paths).prices
        lead = prices.shape[:-1]
        state = {
            "rate": np.broadcast_to(RATE, (*lead, 2)),
            "regime": np.broadcast_to(two_regimes(n_steps + 1), lead),
        }
        return Simulation(prices, state=state)


def test_oracle_finds_the_regime_column_after_a_wider_series_of_the_data() -> None:
    rows, lookback = 60, 4
    prices = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, (rows, 3)), axis=0))
    exogenous = {"rate": np.tile(RATE, (rows, 1)), "regime": two_regimes(rows)}
    data = sekai.finance.MarketData(prices, exogenous=exogenous)
    env = MarketEnv(
        data, exogenous=("rate", "regime"), lookback=lookback, episode_length=20, sampler=0
    )
    result: Any = env.reset(seed=0)
    for k in range(20):
        action = RegimeOracle()(result.observation, env)
        calm = two_regimes(rows)[lookback + k] == 0
        assert action.tolist() == ([1.0, 1.0, 1.0, 0.0] if calm else [0.0, 0.0, 0.0, 1.0])
        result = env.step(action)


def test_oracle_finds_the_regime_column_after_a_wider_series_of_the_model() -> None:
    env = MarketEnv(model=RateAndRegimeModel(), exogenous=("rate", "regime"), privileged_state=True)
    result: Any = env.reset(seed=0)
    seen = set()
    for _ in range(20):
        action = RegimeOracle()(result.observation, env)
        regime = float(result.info["state"]["regime"])
        seen.add(regime)
        assert action.tolist() == ([1.0, 1.0, 1.0, 0.0] if regime == 0 else [0.0, 0.0, 0.0, 1.0])
        result = env.step(action)
    assert seen == {0.0, 1.0}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": sekai.finance.GBM(n_assets=3)},
        {"data": sekai.finance.MarketData(100 + np.arange(120.0).reshape(40, 3))},
    ],
    ids=["gbm", "history"],
)
@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_oracle_on_a_market_without_a_regime_says_what_it_needs(
    kwargs: dict[str, Any], vector: bool
) -> None:
    kwargs = {**kwargs, "lookback": 5, "episode_length": 10}
    env: Any = sekai.make_vec("Market-v0", 2, **kwargs) if vector else MarketEnv(**kwargs)
    result = env.reset(seed=0)
    observations = result.observations if vector else result.observation
    with pytest.raises(ValueError, match=r"^RegimeOracle\(\) needs .*default_market\(\)") as caught:
        RegimeOracle()(observations, env)
    assert "exogenous=('regime',)" in str(caught.value)
    assert str(caught.value).endswith("this env has none (its latent state holds []).")
    env.close()


def test_oracle_returns_a_batch_for_a_vector_env() -> None:
    vec = sekai.make_vec("Market-v0", 2)
    result = vec.reset(seed=0)
    assert RegimeOracle()(result.observations, vec).shape == (2, 11)
    vec.close()


def test_volatility_filter_scores_the_documented_bar() -> None:
    # finance.md §13.6: +0.0497 ± 0.0021 (1,600 episodes); per-episode sd ≈ 0.084
    mean, error = evaluate(VolatilityFilter(), "Market-v0", episodes=192, seed=0, num_envs=64)
    assert abs(mean - 0.0497) <= 4 * float(np.hypot(error, 0.0021)), (mean, error)
