"""PortfolioEnv (Portfolio-v0), the single env."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance.portfolio import PortfolioEnv, scores_to_weights
from sekai.error import InvalidAction, ResetRequired
from sekai.finance import GBM, FixedCost, MarketData, ProportionalCost
from sekai.spaces import flatdim

PRICES = np.array(
    [
        [100.0, 50.0],
        [101.0, 50.5],
        [99.0, 51.0],
        [102.0, 49.0],
        [100.0, 50.0],
        [103.0, 52.0],
    ]
)


def panel(rows: int = 200, n: int = 3, seed: int = 0) -> np.ndarray:
    steps = np.random.default_rng(seed).normal(0.0, 0.01, (rows, n))
    return 100 * np.exp(np.cumsum(steps, axis=0))


def small(**kwargs) -> PortfolioEnv:
    return PortfolioEnv(PRICES, lookback=2, episode_length=3, **kwargs)


def test_default_spaces_and_correlation():
    env = PortfolioEnv()
    assert repr(env.observation_space) == (
        "Dict({returns: Box(-inf, inf, (30, 5), float32), weights: Box(0.0, 1.0, (6,), float32)})"
    )
    assert repr(env.action_space) == "Box(0.0, 1.0, (6,), float32)"
    assert flatdim(env.observation_space) == 156
    assert env.n_assets == 5 and not env.allow_short
    assert env.mu == 0.06 and env.sigma == pytest.approx(np.linspace(0.15, 0.35, 5))
    expected = [
        [1.0, 0.021, -0.036, 0.009, 0.020],
        [0.021, 1.0, -0.089, 0.214, -0.140],
        [-0.036, -0.089, 1.0, -0.081, -0.019],
        [0.009, 0.214, -0.081, 1.0, -0.396],
        [0.020, -0.140, -0.019, -0.396, 1.0],
    ]
    assert env.corr.round(3) == pytest.approx(np.array(expected))


def test_short_action_space():
    env = PortfolioEnv(allow_short=True, n_assets=3)
    assert repr(env.action_space) == "Box(-1.0, 1.0, (3,), float32)"
    assert repr(env.observation_space["weights"]) == "Box(-inf, inf, (4,), float32)"


def test_check_env_passes():
    sekai.testing.assert_env_conforms(PortfolioEnv(n_assets=3, episode_length=20, lookback=4))


def test_action_to_weights():
    env = PortfolioEnv(n_assets=2)
    assert env.action_to_weights([0.5, 0.5, 1.0]).tolist() == [0.25, 0.25, 0.5]
    assert env.action_to_weights([2.0, 1.0, 1.0]).tolist() == [1 / 3, 1 / 3, 1 / 3]  # clipped
    assert env.action_to_weights([0.0, 0.0, 0.0]).tolist() == [0.0, 0.0, 1.0]
    assert env.action_to_weights([5.0, -3.0, 0.0]).tolist() == [1.0, 0.0, 0.0]
    shorts = PortfolioEnv(n_assets=2, allow_short=True)
    assert shorts.action_to_weights([1.0, -1.0]).tolist() == [0.5, -0.5, 1.0]
    assert shorts.action_to_weights([0.2, 0.3]).tolist() == pytest.approx([0.2, 0.3, 0.5])
    with pytest.raises(InvalidAction):
        env.action_to_weights([1.0, np.nan, 1.0])


def test_batched_weights_match_the_single_env():
    actions = np.random.default_rng(0).uniform(-0.5, 1.5, (50, 4))
    actions[0] = 0.0
    env = PortfolioEnv(n_assets=3)
    batch = scores_to_weights(actions, allow_short=False)
    assert np.array_equal(batch, np.stack([env.action_to_weights(a) for a in actions]))
    shorts = PortfolioEnv(n_assets=4, allow_short=True)
    batch = scores_to_weights(actions * 2 - 1, allow_short=True)
    assert np.array_equal(batch, np.stack([shorts.action_to_weights(a) for a in actions * 2 - 1]))


@pytest.mark.parametrize("allow_short", [False, True])
def test_asset_major_weights_are_the_transposed_batch(allow_short):
    actions = np.random.default_rng(1).uniform(-0.5, 1.5, (40, 4)).astype(np.float32)
    actions[[0, 7]] = 0.0  # all-cash rows take the fallback path
    expected = scores_to_weights(actions, allow_short)
    columns = scores_to_weights(actions.T, allow_short, axis=0)  # a transposed view in
    assert columns.flags.c_contiguous and columns.shape == expected.T.shape
    assert np.array_equal(columns, expected.T)


def test_negative_zero_scores_keep_their_sign_as_in_the_single_env():
    actions = np.array([[-0.0, 0.5, 0.5], [0.25, -0.0, 0.75]])
    env = PortfolioEnv(n_assets=2)
    single = np.stack([env.action_to_weights(a) for a in actions])
    for batch in (scores_to_weights(actions, False), scores_to_weights(actions.T, False, axis=0).T):
        assert np.array_equal(np.signbit(batch), np.signbit(single))


def test_reset_observation_and_info():
    env = small()
    result = env.reset(options={"start": 2})
    assert result.observation["returns"] == pytest.approx(
        np.log(PRICES[1:3] / PRICES[0:2]).astype(np.float32)
    )
    assert result.observation["weights"].tolist() == [0.0, 0.0, 1.0]
    assert list(result.info) == [
        "portfolio_value",
        "equity",
        "weights",
        "turnover",
        "cost",
        "asset_returns",
        "timestamp",
        "dt",
    ]
    assert result.info["weights"].dtype == np.float64
    assert result.info["asset_returns"].tolist() == [0.0, 0.0]


def test_one_step_by_hand_normalisation_and_drift():
    env = small()
    env.reset(options={"start": 2})
    result = env.step(np.array([1.0, 0.5, 0.5], np.float32))  # weights 0.5, 0.25, cash 0.25
    r = PRICES[3] / PRICES[2] - 1
    cost = 0.001 * 0.75
    growth = (1 - cost) * (1 + 0.5 * r[0] + 0.25 * r[1])
    grown = np.array([0.5 * (1 + r[0]), 0.25 * (1 + r[1]), 0.25])
    assert result.reward == pytest.approx(np.log(growth))
    assert result.info["portfolio_value"] == pytest.approx(growth) == result.info["equity"]
    assert result.info["weights"] == pytest.approx(grown / grown.sum())
    assert result.info["turnover"] == pytest.approx(0.75)
    assert result.info["cost"] == pytest.approx(cost)
    assert result.info["asset_returns"] == pytest.approx(r)
    assert result.observation["weights"] == pytest.approx((grown / grown.sum()).astype(np.float32))
    assert env.weights == pytest.approx(grown / grown.sum())


def test_holding_the_drifted_weights_trades_nothing():
    env = small()
    env.reset(options={"start": 2})
    env.step(np.array([1.0, 0.5, 0.5]))
    result = env.step(env.weights)
    assert result.info["turnover"] < 1e-15 and result.info["cost"] < 1e-18


def test_all_zero_action_means_all_cash():
    env = small()
    env.reset(options={"start": 2})
    result = env.step(np.zeros(3))
    assert result.reward == 0.0 and result.info["weights"].tolist() == [0.0, 0.0, 1.0]


def test_short_positions_drift_and_financed_cash():
    env = small(allow_short=True)
    env.reset(options={"start": 2})
    result = env.step(np.array([1.0, -1.0]))  # gross 2 -> scaled to 0.5 / -0.5, cash 1.0
    r = PRICES[3] / PRICES[2] - 1
    held = 1 + 0.5 * r[0] - 0.5 * r[1]
    assert result.info["equity"] == pytest.approx(0.999 * held)
    grown = np.array([0.5 * (1 + r[0]), -0.5 * (1 + r[1]), 1.0])
    assert result.info["weights"] == pytest.approx(grown / grown.sum())


def test_cost_of_one_wipes_out():
    env = PortfolioEnv(PRICES, lookback=2, episode_length=3, transaction_cost=FixedCost(2e6))
    env.reset(options={"start": 2})
    result = env.step(np.array([1.0, 0.0, 0.0]))
    assert result.terminated and result.info["equity"] == 0.0
    assert result.info["weights"].tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(ResetRequired):
        env.step(np.ones(3))


def test_truncation_and_reset_required():
    env = small()
    env.reset(options={"start": 2})
    assert [env.step(np.ones(3)).truncated for _ in range(3)] == [False, False, True]
    with pytest.raises(ResetRequired, match="reset"):
        env.step(np.ones(3))
    with pytest.raises(ResetRequired):
        small().step(np.ones(3))


@pytest.mark.parametrize(
    "action", [np.ones(2), np.ones((3, 1)), [1.0, np.inf, 1.0], np.array([np.nan, 1, 1]), "abc"]
)
def test_invalid_actions_are_refused(action):
    env = small()
    env.reset(options={"start": 2})
    with pytest.raises(InvalidAction):
        env.step(action)


def test_out_of_bound_actions_are_clipped_and_lists_work():
    env = small()
    env.reset(options={"start": 2})
    assert env.step([3.0, -1.0, 0.0]).info["weights"][1] == 0.0


def test_info_scalars_are_python_floats_and_ints():
    env = PortfolioEnv(panel(), episode_length=10, lookback=5)
    info = env.step(np.ones(4)).info if env.reset(seed=0) else None
    assert info is not None
    for key in ("portfolio_value", "equity", "turnover", "cost", "dt"):
        assert type(info[key]) is float
    assert type(info["timestamp"]) is int


def test_state_names_and_price_history():
    env = PortfolioEnv(panel(), episode_length=10, lookback=5)
    env.reset(options={"start": 50})
    env.step(np.ones(4))
    assert env.equity == env.portfolio_value and env.elapsed_steps == 1 and env.timestamp == 51
    assert env.price_history.shape == (7, 3)
    assert np.array_equal(env.price_history, panel()[45:52])
    assert env.price.tolist() == panel()[51].tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_assets": 0}, "n_assets must be an int >= 1, got 0"),
        ({"mu": [0.1, 0.2]}, "mu must be a number or 5 numbers"),
        ({"sigma": -0.1}, "sigma must be a finite number >= 0"),
        ({"corr": np.eye(4)}, r"corr must have shape \(5, 5\)"),
        ({"corr": 2 * np.eye(5)}, "unit diagonal"),
        ({"allow_short": 1}, "allow_short must be a bool"),
        ({"episode_length": -3}, "episode_length must be an int >= 1"),
    ],
)
def test_parameters_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PortfolioEnv(**kwargs)


def test_n_assets_must_agree_with_the_source():
    with pytest.raises(ValueError, match="leave n_assets out to follow it"):
        PortfolioEnv(panel(400), n_assets=2)
    with pytest.raises(ValueError, match="leave n_assets out"):
        PortfolioEnv(model=GBM(n_assets=2), n_assets=3)
    assert PortfolioEnv(panel(400)).n_assets == 3
    assert PortfolioEnv(model=GBM(n_assets=2)).n_assets == 2
    assert PortfolioEnv(np.ones(300) * 5).n_assets == 1


def test_panel_with_missing_prices_is_refused():
    prices = panel()
    prices[10, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        PortfolioEnv(prices)
    with pytest.raises(ValueError, match="Market-v0"):
        PortfolioEnv(data=MarketData(prices))


@pytest.mark.parametrize("name", ["n_assets", "allow_short", "lookback", "episode_length"])
def test_shape_parameters_are_read_only(name):
    env = PortfolioEnv()
    with pytest.raises(AttributeError, match="fixed at construction"):
        setattr(env, name, getattr(env, name))


def test_settable_parameters():
    env = PortfolioEnv(n_assets=2)
    env.mu = [0.1, 0.2]
    env.sigma = 0.3
    env.corr = np.eye(2)
    env.cost_model = ProportionalCost([0.001, 0.002])
    env.reset(seed=0)
    result = env.step(np.array([1.0, 1.0, 0.0]))
    assert result.info["cost"] == pytest.approx(0.5 * 0.001 + 0.5 * 0.002)
    with pytest.raises(ValueError, match="corr"):
        env.corr = np.ones((2, 2)) * 2


def test_simulated_prices_start_at_100_and_are_reproducible():
    env = PortfolioEnv(n_assets=3, lookback=4)
    env.reset(seed=5)
    assert env.price_history[0].tolist() == [100.0, 100.0, 100.0]
    first = env.reset(seed=5).observation["returns"]
    assert np.array_equal(
        PortfolioEnv(n_assets=3, lookback=4).reset(seed=5).observation["returns"], first
    )


def test_simulated_path_is_one_block_of_normals_correlated_by_the_cholesky_factor():
    corr = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 1.0]])
    mu, sigma, dt = np.array([0.05, 0.0, 0.1]), np.array([0.1, 0.2, 0.3]), 1 / 252
    env = PortfolioEnv(n_assets=3, lookback=4, episode_length=6, mu=mu, sigma=sigma, corr=corr)
    for seed in (5, 6):  # the second reset uses the factor cached by the first
        env.reset(seed=seed)
        z = np.random.default_rng(seed).standard_normal((10, 3)) @ np.linalg.cholesky(corr).T
        steps = (mu - 0.5 * sigma**2) * dt + sigma * np.sqrt(dt) * z
        expected = 100.0 * np.exp(np.cumsum(steps, axis=0))
        assert np.array_equal(env.price_history[1:], expected[:4])
    env.corr = np.eye(3)  # a new correlation: a new factor
    env.reset(seed=5)
    z = np.random.default_rng(5).standard_normal((10, 3))
    steps = (mu - 0.5 * sigma**2) * dt + sigma * np.sqrt(dt) * z
    assert np.array_equal(env.price_history[1:], (100.0 * np.exp(np.cumsum(steps, 0)))[:4])


def test_pandas_free_panel_timestamps_are_row_indices():
    env = PortfolioEnv(panel(), lookback=5, episode_length=10, sampler="sequential")
    assert env.reset().info["timestamp"] == 5
    assert env.reset().info["timestamp"] == 15


def test_migration_page_equal_weight_score_lands_on_its_printed_digits():
    # The migration page prints "equal weight +0.0086" for seeds 1000..1049 (finance.md §1.6):
    # the single env keeps the reference's draw order, so the mean matches to its 4 decimals.
    env = sekai.RescaleAction(sekai.make("Portfolio-v0", n_assets=3, episode_length=63), -1.0, 1.0)
    totals = []
    for seed in range(1000, 1050):
        result = env.reset(seed=seed)
        total = 0.0
        while not result.done:
            result = env.step(np.ones(4, dtype=np.float32))
            total += float(result.reward)
        totals.append(total)
    assert f"{np.mean(totals):+.4f}" == "+0.0086"
