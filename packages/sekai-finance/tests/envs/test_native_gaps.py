"""Native-env rules not covered elsewhere: Portfolio's model check, frozen PortfolioVecEnv
sub-envs, read-only reasons, the OptimalExecution dust rule, native vs sync in distribution,
ConstantMix without rebalancing, and sampler spawning on the async and proc backends."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import sekai
from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.vector.market_making import MarketMakingVecEnv
from sekai.envs.finance.vector.optimal_execution import OptimalExecutionVecEnv
from sekai.envs.finance.vector.portfolio import PortfolioVecEnv
from sekai.finance import FixedCost, FixedStart, MarketData, SequentialStart, Simulation
from sekai.finance.baselines import ConstantMix

HISTORY = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 179)))
TRADING = {"prices": HISTORY, "episode_length": 21, "lookback": 10}

PANEL = 100 * np.exp(np.cumsum(np.random.default_rng(1).normal(0.0, 0.01, (60, 3)), axis=0))
PORTFOLIO = {
    "prices": PANEL,
    "episode_length": 8,
    "lookback": 4,
}  # window 13, first decisions 4..51


# -- Portfolio-v0: a model with unlisted assets is refused at the first reset (§3.1) ---------------


class PartlyListed:
    """A two-asset model whose second asset is unlisted for the first rows."""

    n_assets = 2
    dt = 1 / 252

    def simulate(self, rng, n_steps, *, n_paths=None):
        shape = (n_steps + 1, 2) if n_paths is None else (n_paths, n_steps + 1, 2)
        prices = np.full(shape, 100.0)
        mask = np.ones(shape, dtype=bool)
        mask[..., :3, 1] = False
        prices[~mask] = np.nan
        return Simulation(prices, mask)


def test_portfolio_refuses_a_model_with_unlisted_assets_at_reset():
    env = PortfolioEnv(model=PartlyListed(), episode_length=3, lookback=2)  # built fine
    assert env.n_assets == 2
    with pytest.raises(ValueError, match="unlisted"):
        env.reset(seed=0)


def test_portfolio_native_refuses_a_model_with_unlisted_assets_at_reset():
    vec = PortfolioVecEnv(3, model=PartlyListed(), episode_length=3, lookback=2)
    with pytest.raises(ValueError, match="unlisted"):
        vec.reset(seed=0)


# -- frozen PortfolioVecEnv sub-envs keep their state (§11.6) --------------------------------------

STATE = ("weights", "portfolio_value", "equity", "price", "timestamp", "elapsed_steps")


def snapshot(vec):
    state = {name: vec.get_attr(name) for name in STATE}
    return state, vec.get_attr("price_history")


def same_state(a, b) -> bool:
    (state_a, hist_a), (state_b, hist_b) = a, b
    for name in STATE:
        if not all(np.array_equal(x, y) for x, y in zip(state_a[name], state_b[name])):
            return False
    return all(np.array_equal(x, y) for x, y in zip(hist_a, hist_b))


def test_frozen_portfolio_sub_envs_keep_their_state():
    vec = PortfolioVecEnv(3, autoreset=False, **PORTFOLIO)
    # Sub-env 2 takes the last window of the history: a frozen step reading past its window
    # would read past the end of the data.
    starts = (4, 20, 51)
    vec.reset(options=[{"start": t} for t in starts])
    actions = np.array([[1, 0, 0, 0], [1, 1, 1, 1], [0, 2, 1, 0]], np.float32)
    for _ in range(8):
        last = vec.step(actions)
    assert last.dones.all() and last.truncated.all()
    before = snapshot(vec)
    state = before[0]
    assert state["timestamp"] == [t + 8 for t in starts]
    assert state["elapsed_steps"] == [8, 8, 8]
    assert all(np.array_equal(p, PANEL[t + 8]) for p, t in zip(state["price"], starts))
    assert [h.shape for h in before[1]] == [(13, 3)] * 3
    assert np.array_equal(before[1][2], PANEL[47:60])
    for other in (actions[::-1], np.zeros((3, 4), np.float32)):
        later = vec.step(other)
        assert later.rewards.tolist() == [0.0, 0.0, 0.0] and later.infos == [{}, {}, {}]
        for key in ("returns", "weights"):
            assert np.array_equal(later.observations[key], last.observations[key])
        assert same_state(snapshot(vec), before)


def test_a_sub_env_frozen_early_keeps_its_state_while_the_others_step():
    # Paying the whole account in costs (cost >= 1: a ticket fee of the whole capital) wipes
    # sub-env 0 out at its first step;
    # sub-env 1 stays in cash (no turnover, no cost) and runs its whole episode.
    vec = PortfolioVecEnv(2, autoreset=False, transaction_cost=FixedCost(1e6), **PORTFOLIO)
    vec.reset(options=[{"start": 51}, {"start": 10}])
    cash = np.array([0, 0, 0, 1], np.float32)
    first = vec.step(np.array([[1, 0, 0, 0], cash]))
    assert first.terminated.tolist() == [True, False]
    assert first.infos[0]["portfolio_value"] == 0.0
    frozen = {name: vec.get_attr(name)[0] for name in STATE}
    frozen_history = vec.get_attr("price_history")[0]
    assert frozen["weights"].tolist() == [0.0, 0.0, 0.0, 1.0]  # wiped out: all cash
    assert frozen["portfolio_value"] == 0.0 and frozen["timestamp"] == 52
    assert np.array_equal(frozen["price"], PANEL[52])
    for k in range(7):
        result = vec.step(np.array([[0.2, 0.3, 0.5, 0.0], cash]))
        assert result.rewards[0] == 0.0 and result.infos[0] == {}
        assert vec.get_attr("timestamp")[1] == 12 + k  # the other sub-env moves on
        now = {name: vec.get_attr(name)[0] for name in STATE}
        assert all(np.array_equal(now[name], frozen[name]) for name in STATE)
        assert np.array_equal(vec.get_attr("price_history")[0], frozen_history)
    assert result.dones.tolist() == [True, True]


# -- read-only parameters and their reasons (§11.2) ------------------------------------------------

SHAPE = "fixes the shapes of the env's arrays; build a new env"
HISTORY_REASON = "loaded when the env is built"
METADATA = "describes the env class"


@pytest.mark.parametrize(
    ("cls", "name", "reason"),
    [
        (PortfolioVecEnv, "episode_length", SHAPE),
        (PortfolioVecEnv, "prices", HISTORY_REASON),
        (PortfolioVecEnv, "data", HISTORY_REASON),
        (PortfolioVecEnv, "metadata", METADATA),
        (MarketMakingVecEnv, "metadata", METADATA),
        (OptimalExecutionVecEnv, "metadata", METADATA),
    ],
)
def test_read_only_parameters_give_their_reason(cls, name, reason):
    vec = cls(2, **PORTFOLIO) if cls is PortfolioVecEnv else cls(2)
    value = getattr(vec, name)
    pattern = rf"^{cls.__name__}\.{name} is read-only: (it (is )?)?{re.escape(reason)}\.$"
    with pytest.raises(AttributeError, match=pattern):
        vec.set_attr(name, value)
    with pytest.raises(AttributeError, match=pattern):
        vec.set_attr(name, [value, value])
    with pytest.raises(AttributeError, match=pattern):
        setattr(vec, name, value)
    assert getattr(vec, name) is value or np.array_equal(getattr(vec, name), value)


@pytest.mark.parametrize(
    ("cls", "metadata"),
    [
        (PortfolioVecEnv, {"render_fps": 10}),
        (MarketMakingVecEnv, {"render_fps": 20}),
        (OptimalExecutionVecEnv, {"render_fps": 5}),
    ],
)
def test_native_metadata_is_the_single_envs(cls, metadata):
    assert cls.metadata == metadata == cls(2).metadata == cls.single_env.metadata


def test_portfolio_history_parameters_are_the_templates():
    vec = PortfolioVecEnv(2, data=MarketData(PANEL), episode_length=8, lookback=4)
    assert vec.data is vec.template.data and np.array_equal(vec.prices, PANEL)
    assert vec.get_attr("episode_length") == [8, 8]


# -- OptimalExecution-v0: the dust rule x < 1e-9·X0 -> 0 (§12.4) -----------------------------------

X0, S0, EPS, ETA, TAU = 1e6, 50.0, 0.0625, 2.5e-6, 0.2


def execution(sold: float, mid: float = S0) -> float:
    return mid - EPS - ETA * sold / TAU


@pytest.mark.parametrize("native", [False, True])
def test_dust_below_1e_9_of_x0_is_dropped_and_ends_the_episode(native):
    fraction = 1.0 - 5e-10  # leaves 5e-4 shares, below 1e-9·X0 = 1e-3
    env = (
        OptimalExecutionVecEnv(1, autoreset=False, sigma=0.0)
        if native
        else OptimalExecutionEnv(sigma=0.0)
    )
    env.reset(seed=0)
    action = np.array([[fraction]]) if native else np.array([fraction])
    result = env.step(action)
    info = result.infos[0] if native else result.info
    sold = fraction * X0
    assert info["shares_sold"] == sold  # the dust is dropped, not sold
    assert info["inventory"] == 0.0
    assert bool(result.terminated[0] if native else result.terminated) is True
    assert float(result.observations[0, 0] if native else result.observation[0]) == 0.0
    price = execution(sold)
    assert info["execution_price"] == pytest.approx(price, rel=1e-15)
    # The risk term uses the inventory after the trade: zero.
    reward = 1e4 * sold * (price - S0) / (X0 * S0)
    assert float(result.rewards[0] if native else result.reward) == pytest.approx(reward, rel=1e-12)


@pytest.mark.parametrize("native", [False, True])
def test_dust_above_the_threshold_is_kept(native):
    fraction = 1.0 - 2e-9  # leaves 2e-3 shares, above 1e-9·X0
    env = OptimalExecutionVecEnv(1, autoreset=False) if native else OptimalExecutionEnv()
    env.reset(seed=0)
    result = env.step(np.array([[fraction]]) if native else np.array([fraction]))
    info = result.infos[0] if native else result.info
    assert info["inventory"] == pytest.approx(X0 - fraction * X0, rel=1e-12)
    assert 1e-3 < info["inventory"] < 3e-3
    assert not (result.terminated[0] if native else result.terminated)


@pytest.mark.parametrize("native", [False, True])
def test_the_dust_threshold_is_relative_to_x0_not_to_what_is_left(native):
    env = (
        OptimalExecutionVecEnv(1, autoreset=False, sigma=0.0)
        if native
        else OptimalExecutionEnv(sigma=0.0)
    )
    env.reset(seed=0)
    wrap = (lambda f: np.array([[f]])) if native else (lambda f: np.array([f]))
    first = env.step(wrap(0.999))
    left = X0 - 0.999 * X0  # 1000 shares
    assert (first.infos[0] if native else first.info)["inventory"] == pytest.approx(left)
    # Selling all but 5e-7 of the 1000 shares leaves 5e-4 < 1e-3 = 1e-9·X0: dropped, although
    # it is 5e-7 of what was left.
    fraction = 1.0 - 5e-7
    second = env.step(wrap(fraction))
    info = second.infos[0] if native else second.info
    assert info["inventory"] == 0.0
    assert bool(second.terminated[0] if native else second.terminated) is True
    first_sold = 0.999 * X0
    left = X0 - first_sold
    sold = fraction * left
    mid = S0 - 2.5e-7 * first_sold  # sigma 0: only the permanent impact moves the mid
    assert info["mid_price"] == pytest.approx(mid - 2.5e-7 * sold, rel=1e-12)
    price = execution(sold, mid)
    assert info["execution_price"] == pytest.approx(price, rel=1e-12)
    reward = 1e4 * sold * (price - S0) / (X0 * S0)
    assert float(second.rewards[0] if native else second.reward) == pytest.approx(reward, rel=1e-9)


# -- OptimalExecution-v0: native and sync agree in distribution with sigma > 0 (§11.4) -------------


def twap_returns(vec, n_envs: int, seed: int) -> np.ndarray:
    vec.reset(seed=seed)
    total = np.zeros(n_envs)
    for k in range(25):
        result = vec.step(np.full((n_envs, 1), 1.0 / (25 - k)))
        total += result.rewards
    assert result.terminated.all()
    return total


def test_native_and_sync_execution_agree_in_distribution():
    n = 1500
    native = sekai.make_vec("OptimalExecution-v0", n, vector_kwargs={"autoreset": False})
    sync = sekai.make_vec(
        "OptimalExecution-v0", n, vectorization_mode="sync", vector_kwargs={"autoreset": False}
    )
    assert type(native).__name__ == "OptimalExecutionVecEnv"
    a, b = twap_returns(native, n, 0), twap_returns(sync, n, 0)
    se_a, se_b = a.std(ddof=1) / math.sqrt(n), b.std(ddof=1) / math.sqrt(n)
    assert abs(a.mean() - b.mean()) < 4 * math.hypot(se_a, se_b), (a.mean(), b.mean())
    # TWAP's expected return is exact (§13.5): -419.52 bps.
    for returns, se in ((a, se_a), (b, se_b)):
        assert abs(returns.mean() - (-419.52)) < 4 * se, returns.mean()
    # The return is linear in the normals: its sd is 1e4·σ·sqrt(τ·Σ x_k²)/(X0·s0), x_k TWAP's
    # holdings after each trade, Σ (1 - k/25)² = 7.84 (k = 1..25).
    sd = 1e4 * 0.95 * math.sqrt(0.2 * 7.84) * X0 / (X0 * S0)
    se_sd = sd / math.sqrt(2 * (n - 1))
    for returns in (a, b):
        assert abs(returns.std(ddof=1) - sd) < 4 * se_sd, (returns.std(ddof=1), sd)


# -- ConstantMix(rebalance=False): enter once, then hold (§13.3, §13.8) ----------------------------

SMALL = np.array(
    [
        [100.0, 50.0],
        [101.0, 50.5],
        [99.0, 51.0],
        [102.0, 49.0],
        [100.0, 50.0],
        [103.0, 52.0],
    ]
)


def held_mix(row: int, start: int, mix: np.ndarray) -> np.ndarray:
    """Buy-and-hold weights ``(n + 1,)`` at ``row`` after entering ``mix`` at ``start``."""
    grown = np.r_[mix * SMALL[row] / SMALL[start], 1.0 - mix.sum()]
    return grown / grown.sum()


def test_constant_mix_without_rebalancing_enters_once_then_lets_the_mix_drift():
    env = sekai.make(
        "Portfolio-v0", prices=SMALL, lookback=2, episode_length=3, transaction_cost=0.001
    )
    mix = np.array([0.5, 0.25])
    policy = ConstantMix(mix, rebalance=False)
    observation = env.reset(options={"start": 2}).observation
    action = policy(observation, env)
    assert np.asarray(action, np.float64).tolist() == [0.5, 0.25, 0.25]  # enter from cash
    result = env.step(action)
    assert result.info["turnover"] == pytest.approx(0.75) and result.info["cost"] == pytest.approx(
        0.00075
    )
    for k, row in enumerate((3, 4, 5)):
        weights = held_mix(row, 2, mix)
        assert result.info["weights"] == pytest.approx(weights, rel=1e-12)
        growth = mix @ (SMALL[row] / SMALL[2]) + 0.25
        assert result.info["portfolio_value"] == pytest.approx((1 - 0.00075) * growth, rel=1e-12)
        if k == 2:
            break
        action = policy(result.observation, env)
        assert np.asarray(action, np.float64) == pytest.approx(weights, rel=1e-12)  # held
        result = env.step(action)
        assert result.info["turnover"] < 1e-12 and result.info["cost"] < 1e-15  # trades nothing
    assert result.truncated


def test_constant_mix_with_rebalancing_trades_the_drift_back():
    env = sekai.make(
        "Portfolio-v0", prices=SMALL, lookback=2, episode_length=3, transaction_cost=0.0
    )
    policy = ConstantMix([0.5, 0.25])
    result = env.step(policy(env.reset(options={"start": 2}).observation, env))
    action = policy(result.observation, env)
    assert np.asarray(action, np.float64).tolist() == [0.5, 0.25, 0.25]
    drift = held_mix(3, 2, np.array([0.5, 0.25]))
    turnover = abs(0.5 - drift[0]) + abs(0.25 - drift[1])
    assert env.step(action).info["turnover"] == pytest.approx(turnover, rel=1e-9)
    assert turnover > 1e-3


def test_constant_mix_without_rebalancing_on_a_native_env_reenters_after_a_reset():
    vec = PortfolioVecEnv(2, prices=SMALL, lookback=2, episode_length=3, transaction_cost=0.0)
    mix = np.array([0.5, 0.25])
    policy = ConstantMix(mix, rebalance=False)
    observations = vec.reset(options={"start": 2}).observations
    for step in range(3):
        actions = np.asarray(policy(observations, vec), np.float64)
        assert actions.shape == (2, 3)
        expected = [0.5, 0.25, 0.25] if step == 0 else held_mix(2 + step, 2, mix)
        for row in actions:
            assert row == pytest.approx(expected, rel=1e-12)
        result = vec.step(actions)
        observations = result.observations
        if step:
            assert result.infos[0]["turnover"] < 1e-12
    assert result.truncated.all()  # autoreset: every sub-env is back in cash
    again = np.asarray(policy(observations, vec), np.float64)
    assert again.tolist() == [[0.5, 0.25, 0.25]] * 2


def test_constant_mix_without_rebalancing_with_shorts_holds_the_drifted_weights():
    env = sekai.make(
        "Portfolio-v0",
        prices=SMALL,
        lookback=2,
        episode_length=3,
        transaction_cost=0.0,
        allow_short=True,
    )
    mix = np.array([0.25, -0.25])
    policy = ConstantMix(mix, rebalance=False)
    observation = env.reset(options={"start": 2}).observation
    assert np.asarray(policy(observation, env), np.float64).tolist() == [0.25, -0.25]
    result = env.step(policy(observation, env))
    for row in (3, 4):
        held = held_mix(row, 2, mix)
        action = np.asarray(policy(result.observation, env), np.float64)
        assert action == pytest.approx(held[:-1], rel=1e-12)  # asset weights only
        result = env.step(action)
        assert result.info["turnover"] < 1e-12


# -- samplers on the async and proc backends (§1.2) ------------------------------------------------


@pytest.mark.parametrize("mode", ["async", "proc"])
def test_every_sub_env_replays_the_same_windows(mode):
    sampler = SequentialStart(start=21, stride=21)
    vec = sekai.make_vec("Trading-v0", 3, vectorization_mode=mode, sampler=sampler, **TRADING)
    try:
        lanes = vec.get_attr("sampler")
        assert len({id(lane) for lane in lanes}) == 3 and all(lane is not sampler for lane in lanes)
        assert all(repr(lane) == "SequentialStart(start=21, stride=21)" for lane in lanes)
        first = vec.reset(seed=0)
        assert [info["timestamp"] for info in first.infos] == [31, 31, 31]
        for _ in range(21):
            result = vec.step(np.ones(3, int))
        assert result.truncated.all()
        assert [info["reset_info"]["timestamp"] for info in result.infos] == [52, 52, 52]
    finally:
        vec.close()
    # The instance passed in was not advanced: a single env using it starts at its first window.
    assert sampler.epoch == 0
    single = sekai.make("Trading-v0", sampler=sampler, **TRADING)
    assert single.reset(seed=0).info["timestamp"] == 31
    assert single.reset().info["timestamp"] == 52


@pytest.mark.parametrize(("mode", "reaches"), [("sync", True), ("async", True), ("proc", False)])
def test_a_shared_sampler_is_shared_in_process_and_copied_into_proc_workers(mode, reaches):
    sampler = FixedStart(5)  # spawn() returns the sampler itself
    vec = sekai.make_vec("Trading-v0", 2, vectorization_mode=mode, sampler=sampler, **TRADING)
    try:
        assert [i["timestamp"] for i in vec.reset(seed=0).infos] == [15, 15]
        sampler.start = 30  # a later change in the parent
        expected = 40 if reaches else 15
        assert [i["timestamp"] for i in vec.reset(seed=1).infos] == [expected, expected]
        lanes = vec.get_attr("sampler")
        assert all((lane is sampler) is reaches for lane in lanes)
    finally:
        vec.close()
