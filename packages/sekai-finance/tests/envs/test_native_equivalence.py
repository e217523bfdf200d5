"""TradingVecEnv / PortfolioVecEnv against SyncVecEnv of the single envs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.envs.finance.trading import TradingEnv
from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.envs.finance.vector.trading import TradingVecEnv
from sekai.finance import (
    DifferentialSharpe,
    DrawdownPenalty,
    FixedCost,
    LogReturn,
    MarketData,
    SequentialStart,
    SpreadCost,
)

RESET_KEYS = ("final_observation", "final_info", "reset_info")

# The native class make_vec() must build by default for each ID (its vector_entry_point).
NATIVE_CLASSES: dict[str, type[sekai.NativeVecEnv]] = {
    "Trading-v0": TradingVecEnv,
    "Portfolio-v0": PortfolioVecEnv,
    "MarketMaking-v0": MarketMakingVecEnv,
    "OptimalExecution-v0": OptimalExecutionVecEnv,
}


def native_vec(env_id: str, num_envs: int, **kw: Any) -> Any:
    """``make_vec(env_id)`` in its default mode, which must give the env's native class (a
    SyncVecEnv would make every comparison below compare the sync backend with itself)."""
    vec = sekai.make_vec(env_id, num_envs, **kw)
    assert type(vec) is NATIVE_CLASSES[env_id], (
        f"make_vec({env_id!r}) built {type(vec).__name__}, not {NATIVE_CLASSES[env_id].__name__}:"
        " is its vector_entry_point registered?"
    )
    return vec


@pytest.mark.parametrize("env_id", list(NATIVE_CLASSES))
def test_the_native_vector_entry_point_is_registered_and_used_by_default(env_id: str) -> None:
    entry_point = sekai.spec(env_id).vector_entry_point
    cls = NATIVE_CLASSES[env_id]
    assert entry_point == f"{cls.__module__}:{cls.__name__}"
    vec = native_vec(env_id, 2)
    vec.close()


def panel(rows: int, n: int, seed: int = 1, scale: float = 0.01) -> np.ndarray:
    steps = np.random.default_rng(seed).normal(0.0, scale, (rows, n))
    return 100 * np.exp(np.cumsum(steps, axis=0))


def crash_panel(rows: int, n: int) -> np.ndarray:
    prices = panel(rows, n, scale=0.02)
    prices[rows // 2 :] *= 0.3  # a crash that wipes out levered longs
    return prices


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b)
            and (a.dtype.kind != "f" or np.array_equal(np.signbit(a), np.signbit(b)))  # -0.0
        )
    return type(a) is type(b) and a == b


def assert_same_result(native: Any, sync: Any, step: int) -> None:
    assert same(native.observations, sync.observations), f"observations differ at step {step}"
    for i, (mine, theirs) in enumerate(zip(native.infos, sync.infos)):
        assert list(mine) == list(theirs), f"info keys differ at step {step}, sub-env {i}"
        for key in mine:
            assert same(mine[key], theirs[key]), f"info[{key!r}] differs at step {step}, env {i}"
    if hasattr(native, "rewards"):
        assert np.array_equal(native.rewards, sync.rewards), f"rewards differ at step {step}"
        assert np.array_equal(native.terminated, sync.terminated)
        assert np.array_equal(native.truncated, sync.truncated)


def run_both(env_id: str, actions: Any, steps: int, *, vector_kwargs=None, options=None, **kw):
    native = native_vec(env_id, 4, vector_kwargs=vector_kwargs, **kw)
    sync = sekai.make_vec(env_id, 4, vectorization_mode="sync", vector_kwargs=vector_kwargs, **kw)
    assert type(sync) is sekai.SyncVecEnv
    assert_same_result(
        native.reset(seed=0, options=options), sync.reset(seed=0, options=options), 0
    )
    for step in range(1, steps + 1):
        action = actions(step)
        assert_same_result(native.step(action), sync.step(action), step)
    native.close()
    sync.close()


def portfolio_actions(n: int, seed: int = 2):
    rng = np.random.default_rng(seed)
    return lambda step: rng.uniform(-0.2, 1.2, (4, n + 1)).astype(np.float32)


def trading_actions(k: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    return lambda step: rng.integers(0, k, 4)


def test_trading_native_equals_sync_on_history_with_sequential_windows():
    kw = {"prices": panel(400, 1)[:, 0], "episode_length": 30, "lookback": 8}
    run_both(
        "Trading-v0",
        trading_actions(4),
        200,
        sampler="sequential",
        positions=(-1.0, 0.0, 0.5, 2.0),
        transaction_cost=0.002,
        **kw,
    )


def test_portfolio_native_equals_sync_on_history_with_sequential_windows():
    kw = {"prices": panel(400, 3), "episode_length": 30, "lookback": 8}
    run_both("Portfolio-v0", portfolio_actions(3), 200, sampler="sequential", **kw)


@pytest.mark.parametrize("autoreset", [True, False])
@pytest.mark.parametrize(
    ("env_id", "actions", "kw"),
    [
        ("Trading-v0", trading_actions(3), {}),
        ("Trading-v0", trading_actions(3), {"s0": 7.3, "dt": 1 / 52}),
        ("Portfolio-v0", portfolio_actions(5), {}),
        ("Portfolio-v0", portfolio_actions(2), {"n_assets": 2, "corr": [[1.0, 0.5], [0.5, 1.0]]}),
    ],
)
def test_a_constant_gbm_gives_the_single_envs_prices_exactly(autoreset, env_id, actions, kw):
    # mu = sigma = 0: every increment is 0, so both envs must keep s0 exactly and agree bit
    # for bit (the single env priced exp(log(s0) + 0), 1 ulp off s0). With a drift the native
    # env's online simulation multiplies exp(increment) step by step, which may differ from
    # the single env's s0 * exp(cumsum) in the last bits (finance.md 11.4 lets draws differ).
    common = {"mu": 0.0, "sigma": 0.0, "episode_length": 7, "lookback": 3, **kw}
    vector_kwargs = {"autoreset": autoreset}
    native = native_vec(env_id, 4, vector_kwargs=vector_kwargs, **common)
    sync = sekai.make_vec(
        env_id, 4, vectorization_mode="sync", vector_kwargs=vector_kwargs, **common
    )
    assert_same_result(native.reset(seed=0), sync.reset(seed=0), 0)
    for step in range(1, 20):
        action = actions(step)
        assert_same_result(native.step(action), sync.step(action), step)
        for mine, theirs in zip(native.get_attr("price_history"), sync.get_attr("price_history")):
            assert same(mine, theirs), f"price_history differs at step {step}"
            assert np.all(theirs == kw.get("s0", 100.0)), f"the price moved at step {step}"
        if not autoreset and native.frozen.all():
            assert_same_result(native.reset(seed=step), sync.reset(seed=step), step)


@pytest.mark.parametrize(
    ("env_id", "actions"),
    [("Trading-v0", trading_actions(3)), ("Portfolio-v0", portfolio_actions(5))],
)
@pytest.mark.parametrize("mu", [0.3, -0.7])
def test_a_gbm_with_only_a_drift_gives_the_single_envs_prices_to_the_last_bits(env_id, actions, mu):
    # sigma = 0 and a drift: deterministic, but the native env steps each price online
    # (price * exp(increment)) where the single env prices s0 * exp(cumsum): equal up to
    # rounding, as vector.md says, and exactly after a reset (both price the window alike)
    common = {"mu": mu, "sigma": 0.0, "episode_length": 60, "lookback": 5}
    native = native_vec(env_id, 4, **common)
    sync = sekai.make_vec(env_id, 4, vectorization_mode="sync", **common)
    assert_same_result(native.reset(seed=0), sync.reset(seed=0), 0)
    for step in range(1, 61):
        action = actions(step)
        native.step(action)
        sync.step(action)
        for mine, theirs in zip(native.get_attr("price_history"), sync.get_attr("price_history")):
            np.testing.assert_allclose(mine, theirs, rtol=1e-13, atol=0, err_msg=f"step {step}")


def test_portfolio_negative_zero_scores_equal_sync():
    kw = {"prices": panel(300, 3), "episode_length": 20, "lookback": 5}
    rng = np.random.default_rng(4)

    def actions(step: int) -> np.ndarray:
        scores = rng.uniform(0.0, 1.0, (4, 4))
        scores[scores < 0.3] = -0.0  # the sign of a zero weight reaches the observation
        return scores

    run_both("Portfolio-v0", actions, 60, sampler="sequential", **kw)


def test_portfolio_with_shorts_equals_sync():
    kw = {"prices": panel(400, 3), "episode_length": 25, "lookback": 5, "allow_short": True}
    rng = np.random.default_rng(9)
    run_both(
        "Portfolio-v0",
        lambda step: rng.uniform(-1.5, 1.5, (4, 3)),
        120,
        sampler="sequential",
        **kw,
    )


@pytest.mark.parametrize("autoreset", [True, False])
def test_fixed_starts_with_wipe_outs_equal_sync(autoreset):
    prices = crash_panel(120, 1)[:, 0]
    crash = TradingEnv(prices, episode_length=40, lookback=5, positions=(-3.0, 0.0, 3.0))
    crash.reset(options={"start": 59})
    assert crash.step(2).terminated  # the scenario really wipes levered longs out
    kw = {"prices": prices, "episode_length": 40, "lookback": 5, "positions": (-3.0, 0.0, 3.0)}
    starts = [{"start": t} for t in (40, 45, 50, 55)]
    run_both(
        "Trading-v0",
        trading_actions(3),
        60,
        vector_kwargs={"autoreset": autoreset},
        options=starts,
        sampler=SequentialStart(start=30, stride=7),
        **kw,
    )


def test_stateful_rewards_and_data_costs_equal_sync():
    prices = panel(300, 2)
    spread = np.abs(np.random.default_rng(4).normal(0.002, 0.001, prices.shape))
    data = MarketData(prices, fields={"spread": spread})
    reward = LogReturn() - 0.5 * DrawdownPenalty() + 0.1 * DifferentialSharpe(0.1)
    run_both(
        "Portfolio-v0",
        portfolio_actions(2),
        150,
        data=data,
        episode_length=20,
        lookback=4,
        sampler="sequential",
        reward=reward,
        transaction_cost=SpreadCost(),
    )


def test_max_episode_steps_truncates_like_time_limit():
    kw = {"prices": panel(300, 1)[:, 0], "episode_length": 50, "lookback": 5}
    run_both("Trading-v0", trading_actions(3), 40, max_episode_steps=7, sampler="sequential", **kw)


def test_same_spaces_and_info_dtypes_when_simulating():
    for env_id, action in (("Trading-v0", np.ones(4, int)), ("Portfolio-v0", np.ones((4, 6)))):
        native = native_vec(env_id, 4)
        sync = sekai.make_vec(env_id, 4, vectorization_mode="sync")
        assert native.observation_space == sync.observation_space
        assert native.action_space == sync.action_space
        a, b = native.reset(seed=0), sync.reset(seed=0)
        a, b = native.step(action), sync.step(action)
        for mine, theirs in zip(a.infos, b.infos):
            assert list(mine) == list(theirs)
            for key in mine:
                assert type(mine[key]) is type(theirs[key])
                if isinstance(mine[key], np.ndarray):
                    assert mine[key].dtype == theirs[key].dtype
                    assert mine[key].shape == theirs[key].shape


def mean_return(vec: Any, action: Any, rounds: int = 4) -> tuple[float, float]:
    totals = []
    for k in range(rounds):
        vec.reset(seed=k)
        total = np.zeros(vec.num_envs)
        done = np.zeros(vec.num_envs, bool)
        while not done.all():
            result = vec.step(action)
            total += result.rewards
            done |= result.dones
        totals.append(total)
    scores = np.concatenate(totals)
    return float(scores.mean()), float(scores.std(ddof=1) / np.sqrt(scores.size))


def test_simulated_means_agree_within_standard_errors():
    kw = {"episode_length": 40, "vector_kwargs": {"autoreset": False}}
    n = 128
    for env_id, action in (("Trading-v0", np.full(n, 2)), ("Portfolio-v0", np.ones((n, 6)))):
        native = native_vec(env_id, n, **kw)
        sync = sekai.make_vec(env_id, n, vectorization_mode="sync", **kw)
        (m1, s1), (m2, s2) = mean_return(native, action), mean_return(sync, action)
        assert abs(m1 - m2) < 4 * np.hypot(s1, s2), (env_id, m1, m2, s1, s2)


def test_native_gbm_log_returns_have_the_model_mean_and_covariance():
    """The native envs' own normals (sekai.finance._normals): the simulated log returns of
    every step, and of the lookback window drawn at reset, have the GBM's moments."""
    mu, sigma, dt = np.array([0.05, -0.1, 0.2]), np.array([0.2, 0.4, 0.3]), 1 / 252
    corr = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])
    vec = PortfolioVecEnv(4096, n_assets=3, mu=mu, sigma=sigma, corr=corr, dt=dt, lookback=5)
    window = vec.reset(seed=4).observations["returns"].astype(np.float64).reshape(-1, 3)
    action = np.ones((4096, 4))
    newest = [vec.step(action).observations["returns"][:, -1] for _ in range(10)]
    steps = np.concatenate(newest).astype(np.float64)
    scale = sigma * np.sqrt(dt)
    for sample in (steps, window):
        n = sample.shape[0]
        mean_error = (sample.mean(axis=0) - (mu - 0.5 * sigma**2) * dt) / (scale / np.sqrt(n))
        assert np.all(np.abs(mean_error) < 5), mean_error
        sd_error = (sample.std(axis=0) / scale - 1) / np.sqrt(0.5 / n)
        assert np.all(np.abs(sd_error) < 5), sd_error
        r = np.corrcoef(sample.T)
        assert np.all(np.abs(r - corr) < 5 * (1 - corr**2 + 1e-3) / np.sqrt(n)), r


@pytest.mark.parametrize("bits", [np.random.MT19937, np.random.SFC64])
def test_native_gbm_has_its_volatility_with_any_generator_set_as_rng(bits: Any) -> None:
    vec = PortfolioVecEnv(1024, n_assets=2, sigma=0.3, dt=1 / 252)
    vec.reset(seed=0)
    vec.rng = np.random.Generator(bits(4))
    vec.reset()
    steps = [vec.step(np.ones((1024, 3))).observations["returns"][:, -1] for _ in range(5)]
    sd = np.concatenate(steps).astype(np.float64).std(axis=0)
    assert np.allclose(sd, 0.3 * np.sqrt(1 / 252), rtol=0.03), sd


def test_reset_windows_are_the_simulated_paths_in_full_and_partial_resets():
    corr = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, -0.4], [0.0, -0.4, 1.0]])
    ruin = FixedCost(1_000_000.0)  # a ticket fee of the whole capital: a trade costs it all
    vec = PortfolioVecEnv(4, n_assets=3, corr=corr, lookback=6, transaction_cost=ruin)

    def check_window(k: int, history: np.ndarray, window: np.ndarray) -> None:
        assert history[0].tolist() == [100.0] * 3  # exactly s0
        logs = np.log(history[1:7] / history[:6])
        assert np.allclose(window[k], logs, rtol=1e-5, atol=1e-7)

    window = vec.reset(seed=3).observations["returns"]
    before = vec.price_history
    for k in range(4):
        assert before[k].shape == (7, 3)
        check_window(k, before[k], window)
    assert len({h[1:].tobytes() for h in before}) == 4  # independent paths
    # sub-env 2 pays all it has for its trade, ends and restarts alone
    actions = np.tile([0.0, 0.0, 0.0, 1.0], (4, 1))
    actions[2] = [1.0, 0.0, 0.0, 0.0]
    result = vec.step(actions)
    assert result.terminated.tolist() == [False, False, True, False]
    after = vec.price_history
    for k in (0, 1, 3):
        assert after[k].shape == (8, 3) and np.array_equal(after[k][:7], before[k])
    assert after[2].shape == (7, 3) and not np.array_equal(after[2], before[2])
    window = result.observations["returns"]
    check_window(2, after[2], window)
    for k in (0, 1, 3):
        assert np.allclose(window[k], np.log(after[k][2:] / after[k][1:-1]), rtol=1e-5, atol=1e-7)


def test_native_constructors_take_single_env_keywords():
    vec = TradingVecEnv(3, autoreset=False, max_episode_steps=9, lookback=4, sigma=0.1)
    assert vec.template.lookback == 4 and vec.sigma == 0.1 and vec.max_episode_steps == 9
    assert repr(vec) == "TradingVecEnv(num_envs=3)"
    assert repr(PortfolioVecEnv(2, n_assets=3)) == "PortfolioVecEnv(num_envs=2)"
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        TradingVecEnv(2, sigma=-1.0)
