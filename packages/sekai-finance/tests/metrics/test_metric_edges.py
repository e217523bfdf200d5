"""Metric edge cases (finance.md §8, §9).

DrawdownPenalty with a non-positive peak, PnLSummary's absolute drawdown from a running peak that
starts at 0 and its hit rate, calmar_ratio without a drawdown, the fields ``summary()`` leaves out,
and RecordPerformance in P&L mode on MarketMaking-v0.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.finance.metrics import (
    PerformanceSummary,
    PnLSummary,
    RecordPerformance,
    calmar_ratio,
    performance_summary,
    pnl_summary,
)
from sekai.finance.rewards import DrawdownPenalty, StepOutcome


def at(equity: Any) -> StepOutcome:
    equity = np.asarray(equity, dtype=np.float64)
    return StepOutcome.from_growth(np.ones_like(equity), equity=equity, turnover=0.0, cost=0.0)


# -- DrawdownPenalty: dd = 1 − equity/peak, and 1 if peak <= 0 ---------------------------------


def test_drawdown_penalty_wipe_out_is_a_full_drawdown():
    penalty = DrawdownPenalty()
    # peak 1.2; dd 0.25 at 0.9; equity 0 gives dd 1, which deepened by 0.75; then it stays 1
    values = [penalty(at(e)) for e in (1.2, 0.9, 0.0, 0.0)]
    assert values == pytest.approx([0.0, 0.25, 0.75, 0.0])


def test_drawdown_penalty_first_step_wipe_out_costs_one():
    # the peak starts at 1, so equity 0 on the first step is a drawdown of 1 from 0
    assert DrawdownPenalty()(at(0.0)) == pytest.approx(1.0)


# -- PnLSummary: absolute drawdown from a running peak starting at 0, hit rate -----------------


def test_pnl_drawdown_counts_losses_from_zero_at_the_start():
    # cumulative 0, -1, -3, -2.5: the peak stays at 0, the largest fall is 3
    # (a peak starting at the first cumulative value, -1, would give 2)
    assert pnl_summary([-1.0, -2.0, 0.5]).max_drawdown == pytest.approx(3.0)


def test_pnl_drawdown_is_in_absolute_units():
    # cumulative 0, 100, -150, -50: peak 100, fall 250 (not a fraction of the peak)
    assert pnl_summary([100.0, -250.0, 100.0]).max_drawdown == pytest.approx(250.0)


def test_pnl_drawdown_tracks_the_running_peak():
    # cumulative 0, 2, -1, 0, 5, 3: falls 3 (from 2) and 2 (from 5); the largest is 3
    assert pnl_summary([2.0, -3.0, 1.0, 5.0, -2.0]).max_drawdown == pytest.approx(3.0)


def test_pnl_drawdown_is_zero_for_a_rising_pnl():
    assert pnl_summary([1.0, 0.0, 2.0]).max_drawdown == 0.0


def test_pnl_hit_rate_is_positive_over_non_zero_periods():
    # positives 1, 2; non-zero 1, -1, 2: 2/3 (zeros are neither hits nor misses)
    summary = pnl_summary([1.0, 0.0, -1.0, 2.0, 0.0])
    assert summary.hit_rate == pytest.approx(2 / 3)


def test_pnl_hit_rate_is_zero_when_every_increment_is_zero():
    summary = pnl_summary([0.0, 0.0, 0.0])
    assert summary.hit_rate == 0.0
    assert summary.max_drawdown == 0.0 and summary.total_pnl == 0.0


# -- calmar_ratio without a drawdown ------------------------------------------------------------


@pytest.mark.parametrize("returns", [[0.0], [0.0, 0.0, 0.0], [0.0, -0.0]])
def test_calmar_is_zero_with_no_drawdown_and_no_positive_return(returns):
    assert calmar_ratio(returns) == 0.0
    assert performance_summary(returns).calmar_ratio == 0.0


@pytest.mark.parametrize("returns", [[0.01], [0.01, 0.02], [0.01, 0.0, 0.02]])
def test_calmar_is_inf_with_no_drawdown_and_a_positive_return(returns):
    assert calmar_ratio(returns) == np.inf
    assert performance_summary(returns).calmar_ratio == np.inf


# -- RecordPerformance.summary(): fields that are always None are left out ---------------------


class Ledger(sekai.Env[np.ndarray, int]):
    """Equity (or wealth) follows a fixed list; extra info keys are optional."""

    def __init__(
        self, values: list[float], *, key: str = "equity", start: float = 1.0, **extra: float
    ) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (1,))
        self.action_space = sekai.Discrete(2)
        self.values = values
        self.key = key
        self.start = start
        self.extra = extra

    def _info(self, value: float) -> dict[str, Any]:
        return {self.key: value, **self.extra}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return sekai.ResetResult(np.zeros(1, np.float32), self._info(self.start))

    def step(self, action):
        self.t += 1
        done = self.t >= len(self.values)
        info = self._info(self.values[self.t - 1])
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, done, info)


def episode(env: sekai.Env) -> dict[str, Any]:
    env.reset()
    while True:
        result = env.step(0)
        if result.terminated or result.truncated:
            return result.info


def names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


EQUITY_FIELDS = names(PerformanceSummary) - {"mean_turnover", "total_cost"}


def test_summary_of_an_env_without_turnover_or_cost_leaves_them_out():
    env = RecordPerformance(Ledger([1.1]))
    episode(env)
    env.env.values = [1.2]
    episode(env)
    means = env.summary()
    assert set(means) == EQUITY_FIELDS
    assert means["total_return"] == pytest.approx((0.1 + 0.2) / 2)
    assert means["n_periods"] == 1.0


def test_summary_leaves_out_turnover_and_cost_when_their_keys_are_none():
    env = RecordPerformance(
        Ledger([1.1], turnover=0.5, cost=0.001), turnover_key=None, cost_key=None
    )
    episode(env)
    assert set(env.summary()) == EQUITY_FIELDS


def test_summary_keeps_turnover_and_cost_when_the_env_reports_them():
    env = RecordPerformance(Ledger([1.1, 1.21], turnover=0.5, cost=0.001))
    episode(env)
    means = env.summary()
    assert set(means) == names(PerformanceSummary)
    assert means["mean_turnover"] == pytest.approx(0.5)
    assert means["total_cost"] == pytest.approx(0.002)


def test_summary_in_pnl_mode_has_no_turnover_or_cost():
    env = RecordPerformance(
        Ledger([2.0, 1.0], key="wealth", start=0.0, turnover=0.5, cost=0.001), pnl_key="wealth"
    )
    episode(env)
    means = env.summary()
    assert set(means) == names(PnLSummary)
    assert "mean_turnover" not in means and "total_cost" not in means
    assert means["total_pnl"] == pytest.approx(1.0)


def test_summary_is_empty_before_any_episode_finishes():
    assert RecordPerformance(Ledger([1.1])).summary() == {}


def test_pnl_mode_increments_start_from_the_reset_value():
    env = RecordPerformance(Ledger([12.0, 9.0], key="wealth", start=10.0), pnl_key="wealth")
    summary = episode(env)["performance"]
    assert env.last_returns.tolist() == [2.0, -3.0]
    assert summary.total_pnl == pytest.approx(9.0 - 10.0)
    # cumulative P&L 0, 2, -1: a fall of 3 from the peak 2
    assert summary.max_drawdown == pytest.approx(3.0)


# -- RecordPerformance in P&L mode on MarketMaking-v0 -------------------------------------------


def play_session(env: RecordPerformance, seed: int) -> tuple[float, list[float], dict[str, Any]]:
    """Quote at a fixed distance until the session ends; the reset and per-step wealths."""
    reset_wealth = float(env.reset(seed=seed).info["wealth"])
    wealths: list[float] = []
    action = np.array([0.5, 0.5], dtype=np.float32)
    while True:
        result = env.step(action)
        wealths.append(float(result.info["wealth"]))
        if result.terminated or result.truncated:
            return reset_wealth, wealths, result.info


def test_record_performance_pnl_mode_on_market_making():
    env = RecordPerformance(sekai.make("MarketMaking-v0"), pnl_key="wealth")
    reset_wealth, wealths, info = play_session(env, seed=3)
    summary = info["performance"]
    assert isinstance(summary, PnLSummary)
    assert reset_wealth == 0.0  # §12.3: wealth 0 at reset
    assert summary.n_periods == len(wealths) == 200  # n_steps defaults to 200
    assert summary.total_pnl == pytest.approx(wealths[-1] - reset_wealth)
    path = np.array([reset_wealth, *wealths])
    increments = np.diff(path)
    assert env.last_returns.dtype == np.float64
    assert env.last_returns == pytest.approx(increments)
    assert summary.mean_pnl == pytest.approx(np.mean(increments))
    cumulative = path - reset_wealth
    peak = np.maximum.accumulate(np.maximum(cumulative, 0.0))
    assert summary.max_drawdown == pytest.approx(np.max(peak - cumulative))
    nonzero = increments[increments != 0]
    expected_hit = np.mean(nonzero > 0) if nonzero.size else 0.0
    assert summary.hit_rate == pytest.approx(expected_hit)
    # periods_per_year defaults to 1/dt = 1/0.005 = 200 (§9 [improve])
    std = np.std(increments, ddof=1)
    assert std > 0  # quoting 0.5 from the mid fills often: the wealth moves
    expected_sharpe = np.mean(increments) / std * np.sqrt(200.0)
    assert summary.sharpe_ratio == pytest.approx(expected_sharpe)
    assert env.last_summary is summary


def test_record_performance_pnl_mode_over_market_making_sessions():
    env = RecordPerformance(sekai.make("MarketMaking-v0", n_steps=20), pnl_key="wealth")
    totals = []
    for seed in (0, 1):
        reset_wealth, wealths, info = play_session(env, seed=seed)
        assert info["performance"].n_periods == len(wealths) == 20
        assert info["performance"].total_pnl == pytest.approx(wealths[-1] - reset_wealth)
        totals.append(wealths[-1] - reset_wealth)
    assert len(env.summaries) == 2
    means = env.summary()
    assert set(means) == names(PnLSummary)
    assert means["n_periods"] == 20.0
    assert means["total_pnl"] == pytest.approx(np.mean(totals))
