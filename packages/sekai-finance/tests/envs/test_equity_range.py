"""Account equity that leaves float64's range: underflowing to 0 is a wipe-out (the episode
terminates, as a growth <= 0 ends it), and overflowing to infinity is refused with a
ValueError naming the env, the decision and what drives the equity, on the single and the
native envs alike (Trading-v0, Portfolio-v0, Market-v0)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.error import ResetRequired
from sekai.finance import MarketData, ProfitAndLoss
from sekai.finance.simulators import GBM

WIPE_OUT_REWARD = math.log(1e-12)  # LogReturn of a wipe-out: the growth floored at 1e-12
FLAT = np.full(410, 100.0)  # a price that never moves: only the costs change the equity
# A price that jumps 1e200-fold every other step: held on the way up, equity passes 1e308.
JUMPS = np.array([1.0, 1e200] * 6)
OVERFLOW = "'s equity overflowed to infinity in the step "


def _alternate(k: int, first: Any, second: Any) -> Any:
    return first if k % 2 == 0 else second


# -- underflow: a wipe-out --------------------------------------------------------------------

# Each step trades the whole account across (turnover 2 at a rate 0.45, or 1 at 0.9): costs
# take 90 % of it, and 0.1**k underflows float64 to 0 after some 324 steps, the growth of
# every step still positive.
UNDERFLOWS: dict[str, tuple[dict[str, Any], Any, Any]] = {
    "Trading-v0": ({"prices": FLAT, "transaction_cost": 0.45}, 0, 2),  # short, long
    "Portfolio-v0": (
        {"prices": np.stack([FLAT, FLAT], axis=1), "transaction_cost": 0.9},
        np.array([1.0, 0.0, 0.0], np.float32),  # all in the first asset
        np.array([0.0, 0.0, 1.0], np.float32),  # all cash
    ),
}
EPISODE = {"lookback": 2, "episode_length": 400}


def _underflow_episode(env: Any, first: Any, second: Any) -> list[Any]:
    env.reset(seed=0)
    results = []
    while not (results and results[-1].done):
        results.append(env.step(_alternate(len(results), first, second)))
    return results


@pytest.mark.parametrize("env_id", list(UNDERFLOWS))
def test_equity_that_underflows_to_0_wipes_the_account_out(env_id: str) -> None:
    kwargs, first, second = UNDERFLOWS[env_id]
    env = sekai.make(env_id, **kwargs, **EPISODE)
    results = _underflow_episode(env, first, second)
    last, before = results[-1], results[-2]
    assert 300 < len(results) < 400  # it ended early, the growth of the step still 0.1
    assert before.info["equity"] > 0.0 and last.info["equity"] == 0.0
    assert last.terminated and not last.truncated
    assert last.reward == WIPE_OUT_REWARD  # as a growth <= 0 gives
    if env_id == "Trading-v0":
        assert last.info["position"] == 0.0 and last.observation[-1] == 0.0
    else:
        assert last.info["weights"].tolist() == [0.0, 0.0, 1.0]  # all cash, as wiped out
    with pytest.raises(ResetRequired):
        env.step(first)


@pytest.mark.parametrize("env_id", list(UNDERFLOWS))
def test_native_envs_wipe_out_an_underflow_as_the_single_env_does(env_id: str) -> None:
    kwargs, first, second = UNDERFLOWS[env_id]
    single = _underflow_episode(sekai.make(env_id, **kwargs, **EPISODE), first, second)
    vec = sekai.make_vec(env_id, 3, **kwargs, **EPISODE, vector_kwargs={"autoreset": False})
    vec.reset(seed=0)
    for k, expected in enumerate(single):
        result = vec.step(np.stack([_alternate(k, first, second)] * 3))
        assert result.rewards.tolist() == [expected.reward] * 3
        assert result.terminated.tolist() == [expected.terminated] * 3
        assert [info["equity"] for info in result.infos] == [expected.info["equity"]] * 3
    assert result.terminated.all() and vec.get_attr("equity") == [0.0] * 3


def test_a_wipe_out_by_underflow_gives_the_profit_and_loss_of_a_wipe_out() -> None:
    kwargs, first, second = UNDERFLOWS["Trading-v0"]
    env = sekai.make("Trading-v0", **kwargs, **EPISODE, reward=ProfitAndLoss())
    results = _underflow_episode(env, first, second)
    assert results[-1].terminated and len(results) < 400
    assert results[-1].reward == -results[-2].info["equity"] < 0.0  # all the equity lost
    assert sum(r.reward for r in results) == pytest.approx(-1.0)  # final equity 0 minus 1


def test_market_env_wipes_out_an_underflow() -> None:
    data = MarketData(np.full((400, 1), 100.0))
    env = sekai.make("Market-v0", data=data, lookback=2, episode_length=390, transaction_cost=0.9)
    asset, cash = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    results = _underflow_episode(env, asset, cash)
    last = results[-1]
    assert 300 < len(results) < 390 and last.terminated
    assert last.info["equity"] == 0.0 and last.reward == WIPE_OUT_REWARD
    assert last.info["weights"].tolist() == [0.0]
    assert np.isfinite(last.observation["account"]).all()


# Long, then short at a rate of 0.9: the second step trades 2 and costs 1.8 (more than the
# account), while the short loses twice the equity as the price triples (held growth -1).
# The product of the two negative factors must not bring the account back to life.
TRIPLES = np.r_[np.full(4, 100.0), np.full(4, 300.0)]
COSTS_TAKE_ALL: dict[str, tuple[dict[str, Any], Any, Any]] = {
    "Trading-v0": ({"positions": (-1.0, 0.0, 1.0)}, 2, 0),
    "Portfolio-v0": ({"allow_short": True}, np.ones(1, np.float32), -np.ones(1, np.float32)),
}


@pytest.mark.parametrize("env_id", list(COSTS_TAKE_ALL))
def test_costs_that_take_the_whole_account_wipe_it_out_whatever_the_holding_lost(
    env_id: str,
) -> None:
    kwargs, long, short = COSTS_TAKE_ALL[env_id]
    common = {
        "prices": TRIPLES,
        "transaction_cost": 0.9,
        "lookback": 1,
        "episode_length": 4,
        **kwargs,
    }
    env = sekai.make(env_id, **common)
    env.reset(options={"start": 2})
    assert env.step(long).info["equity"] == pytest.approx(0.1)  # costs 0.9, the price flat
    single = env.step(short)
    assert single.info["cost"] == pytest.approx(1.8)
    assert single.terminated and not single.truncated
    assert single.info["equity"] == 0.0 and single.reward == WIPE_OUT_REWARD
    vec = sekai.make_vec(env_id, 2, **common, vector_kwargs={"autoreset": False})
    vec.reset(options={"start": 2})
    vec.step(np.stack([long] * 2))
    batch = vec.step(np.stack([short] * 2))
    assert batch.terminated.tolist() == [True, True]
    assert batch.rewards.tolist() == [WIPE_OUT_REWARD] * 2
    assert vec.get_attr("equity") == [0.0, 0.0]


# -- overflow: refused -------------------------------------------------------------------------

# A drift of 2 a year with years-long steps, and positions up to 3x: equity grows about
# e**3 a step and passes float64's largest number near step 236, while the price (e**2 a
# step) stays inside it over the episode.
LEVERED = {
    "mu": 2.0,
    "sigma": 0.0,
    "dt": 1.0,
    "positions": (0.0, 1.0, 3.0),
    "transaction_cost": 0.0,
    "lookback": 2,
    "episode_length": 300,
}
LEVERED_VALUES = "positions=(0.0, 1.0, 3.0), mu=2.0, sigma=0.0, dt=1.0"


def _until_refused(env: Any, action: Any) -> tuple[str, int]:
    """Step with ``action`` until a step raises: its message, and the steps before it."""
    steps = 0
    with pytest.raises(ValueError, match=re.escape(OVERFLOW)) as caught:
        while True:
            env.step(action)
            steps += 1
    return str(caught.value), steps


def test_trading_env_refuses_the_step_whose_equity_overflows() -> None:
    env = sekai.make("Trading-v0", **LEVERED)
    env.reset(seed=0)
    message, steps = _until_refused(env, 2)
    assert 200 < steps < 300
    assert message.startswith(
        f"TradingEnv's equity overflowed to infinity in the step at the decision of step "
        f"{steps} ({LEVERED_VALUES}): "
    )
    assert message.endswith(
        "Use smaller positions, a mu nearer 0 or a smaller dt, or a shorter episode_length."
    )
    assert math.isfinite(env.unwrapped.equity)  # the failed step changed nothing
    assert env.unwrapped.elapsed_steps == steps
    with pytest.raises(ResetRequired, match="The episode is over"):
        env.step(1)
    env.reset(seed=1)
    assert env.step(0).info["equity"] == 1.0  # flat


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's, then ours
def test_native_trading_refuses_it_at_the_same_decision_and_changes_nothing() -> None:
    single = sekai.make("Trading-v0", **LEVERED)
    single.reset(seed=0)
    _, steps = _until_refused(single, 2)
    vec = sekai.make_vec("Trading-v0", 3, **LEVERED)
    vec.reset(seed=0)
    longs = np.full(3, 2)
    for _ in range(steps):
        vec.step(longs)
    state = {name: vec.get_attr(name) for name in ("equity", "price", "elapsed_steps")}
    message, more = _until_refused(vec, longs)
    assert more == 0
    assert message.startswith(
        "TradingVecEnv's equity overflowed to infinity in the step of sub-env 0 at the "
        f"decision of step {steps} ({LEVERED_VALUES}): "
    )
    for name, value in state.items():
        assert np.array_equal(np.asarray(vec.get_attr(name)), np.asarray(value)), name
    with pytest.raises(ResetRequired, match="The episode is over"):
        vec.step(longs)  # every sub-env waits for reset()
    vec.reset(seed=1)
    assert vec.step(np.zeros(3, np.int64)).rewards.tolist() == [0.0] * 3  # flat


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_a_sub_env_waiting_after_an_overflow_lets_the_others_step_even_to_a_wipe_out() -> None:
    vec = sekai.make_vec(
        "Trading-v0",
        2,
        prices=JUMPS,
        positions=(-1.0, 0.0, 1.0),
        transaction_cost=0.0,
        lookback=1,
        episode_length=8,
        vector_kwargs={"autoreset": False},
    )
    vec.reset(seed=0, options={"start": 2})  # at a price of 1, which then jumps to 1e200
    short, flat, long = 0, 1, 2
    vec.step(np.array([long, flat]))  # sub-env 0's equity 1e200
    vec.step(np.array([flat, flat]))  # the price falls back to 1
    message, _ = _until_refused(vec, np.array([long, flat]))  # 1e200 * 1e200
    assert "in the step of sub-env 0 " in message
    assert vec.get_attr("equity") == [1e200, 1.0] and vec.get_attr("elapsed_steps") == [2, 2]
    # Sub-env 1 steps, its short wiped out by the jump (the wipe-out path); sub-env 0, which
    # would overflow again, waits for reset() and is left out of the check.
    with pytest.raises(ResetRequired, match="The episode is over"):
        vec.step(np.array([long, short]))
    assert vec.get_attr("equity") == [1e200, 0.0] and vec.get_attr("elapsed_steps") == [2, 3]
    vec.reset(seed=0, options={"start": 2})
    assert vec.step(np.array([flat, flat])).rewards.tolist() == [0.0, 0.0]


def test_native_trading_names_the_gbm_the_failed_episode_simulated_with() -> None:
    vec = sekai.make_vec("Trading-v0", 2, **LEVERED)
    vec.reset(seed=0)
    vec.set_attr("mu", 0.05)  # the running episodes keep simulating with mu=2.0
    with pytest.warns(RuntimeWarning, match="overflow"):  # numpy's, then ours
        message, _ = _until_refused(vec, np.full(2, 2))
    assert f"({LEVERED_VALUES})" in message


@pytest.mark.parametrize("mode", ["single", "sync"])
def test_single_trading_names_the_gbm_the_failed_episode_simulated_with(mode: str) -> None:
    env: Any = (
        sekai.make("Trading-v0", **LEVERED)
        if mode == "single"
        else sekai.make_vec("Trading-v0", 1, vectorization_mode="sync", **LEVERED)
    )
    env.reset(seed=0)
    new = {"mu": 0.05, "sigma": 0.1, "dt": 0.5}  # from the next episode on
    for name, value in new.items():
        if mode == "single":
            setattr(env.unwrapped, name, value)
        else:
            env.set_attr(name, value)
    message, _ = _until_refused(env, 2 if mode == "single" else np.array([2]))
    assert f"({LEVERED_VALUES})" in message
    env.reset(seed=0)  # an episode of the new parameters: no overflow in 300 steps
    for _ in range(300):
        result = env.step(2 if mode == "single" else np.array([2]))
    assert math.isfinite(result.info["equity"] if mode == "single" else result.infos[0]["equity"])


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("native", [False, True])
def test_portfolio_refuses_the_step_whose_equity_overflows(native: bool) -> None:
    kwargs = {"prices": JUMPS, "lookback": 1, "episode_length": 10, "transaction_cost": 0.0}
    asset, cash = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    env: Any = (
        sekai.make_vec("Portfolio-v0", 2, **kwargs)
        if native
        else sekai.make("Portfolio-v0", **kwargs)
    )
    env.reset(seed=0)
    for k in range(3):  # cash while the price falls, the asset while it rises: 1e200
        action = _alternate(k, cash, asset)
        env.step(np.stack([action] * 2) if native else action)
    message, _ = _until_refused(env, np.stack([asset] * 2) if native else asset)
    where = "of sub-env 0 at" if native else "at"
    name = "PortfolioVecEnv" if native else "PortfolioEnv"
    assert message.startswith(
        f"{name}{OVERFLOW}{where} the decision of row 4 (timestamp 4) (its price history): "
    )
    # No parameter sets its leverage, and mu and dt play no part in a history.
    assert message.endswith("range. Use a shorter episode_length, or other price data.")


def test_market_env_refuses_the_step_whose_equity_overflows() -> None:
    model = GBM(mu=2.0, sigma=0.0, dt=1.0, n_assets=1)
    env = sekai.make(
        "Market-v0",
        model=model,
        max_leverage=3.0,
        lookback=2,
        episode_length=300,
        transaction_cost=0.0,
    )
    env.reset(seed=0)
    message, steps = _until_refused(env, np.array([1.0, 0.0], np.float32))
    assert 200 < steps < 300
    assert message.startswith(
        f"MarketEnv{OVERFLOW}at the decision of step {steps} (max_leverage=3.0, model={model!r}): "
    )
    assert message.endswith(  # it has no mu
        "Use a lower max_leverage, a model whose returns compound less, or a shorter "
        "episode_length."
    )


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("native", [False, True])
def test_a_replayed_history_is_advised_other_data_not_mu_or_dt(native: bool) -> None:
    kwargs = {"prices": JUMPS, "positions": (0.0, 1.0), "lookback": 1, "episode_length": 10}
    env: Any = (
        sekai.make_vec("Trading-v0", 2, **kwargs) if native else sekai.make("Trading-v0", **kwargs)
    )
    env.reset(seed=0)
    for k in range(3):  # flat while the price falls, long while it rises: 1e200
        env.step(np.full(2, k % 2) if native else k % 2)
    message, _ = _until_refused(env, np.ones(2, np.int64) if native else 1)
    assert "(positions=(0.0, 1.0), its price history): " in message
    assert message.endswith(
        "range. Use smaller positions, a shorter episode_length, or other price data."
    )


# -- a frozen sub-env wiped out (autoreset=False) ------------------------------------------------

# A price that doubles every step, exactly: a short of the whole account (position -1) is
# worth 1 - 1 * 1.0 = 0 after any step, a wipe-out; flat or long accounts live on.
DOUBLING = 100.0 * 2.0 ** np.arange(40)


def _settled_alive(vec: Any, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record ``alive`` of every step's settlement (the usual, no wipe-out path)."""
    seen: list[bool] = []
    settle = vec._settle

    def recording(growth: np.ndarray, frozen: Any) -> tuple[np.ndarray, np.ndarray, bool]:
        result: tuple[np.ndarray, np.ndarray, bool] = settle(growth, frozen)
        seen.append(result[2])
        return result

    monkeypatch.setattr(vec, "_settle", recording)
    return seen


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_a_frozen_wiped_out_sub_env_leaves_the_others_steps_on_the_usual_path(
    env_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    actions: Any
    if env_id == "Trading-v0":
        kwargs: dict[str, Any] = {"prices": DOUBLING, "positions": (-1.0, 0.0, 1.0)}
        actions = np.array([0, 1, 2])  # short, flat, long
    else:  # scores of the one asset: weights (-1, cash 2), all cash, all in the asset
        kwargs = {"prices": DOUBLING, "allow_short": True}
        actions = np.array([[-1.0], [0.0], [1.0]], np.float32)
    vec: Any = sekai.make_vec(
        env_id,
        3,
        **kwargs,
        lookback=1,
        episode_length=20,
        transaction_cost=0.0,
        vector_kwargs={"autoreset": False},
    )
    vec.reset(seed=0, options={"start": 1})
    seen = _settled_alive(vec, monkeypatch)
    first = vec.step(actions)
    assert first.terminated.tolist() == [True, False, False]  # sub-env 0 wiped out
    assert seen == [False]
    for k in range(2, 7):  # sub-env 0 frozen at equity 0; its repeated short is worth 0 again
        result = vec.step(actions)  # and warns of nothing (warnings are errors here)
        assert result.rewards.tolist() == [0.0, 0.0, math.log(2.0)]  # frozen: 0
        assert result.terminated.tolist() == [True, False, False]  # sub-env 0's, kept
        assert vec.get_attr("equity") == [0.0, 1.0, 2.0**k]
        if env_id == "Trading-v0":
            assert vec.get_attr("position") == [0.0, 0.0, 1.0]
        else:
            assert [w.tolist() for w in vec.get_attr("weights")] == [
                [0.0, 1.0],
                [0.0, 1.0],
                [1.0, 0.0],
            ]
    assert seen == [False] + [True] * 5  # the usual path, the frozen wipe-out left out
