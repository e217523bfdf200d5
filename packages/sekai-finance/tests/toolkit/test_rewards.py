"""Reward functions and their composition."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from sekai.finance.rewards import (
    DifferentialSharpe,
    DrawdownPenalty,
    LogReturn,
    MeanVariance,
    ProfitAndLoss,
    SimpleReturn,
    StepOutcome,
    TurnoverPenalty,
    period_reward,
)


def outcome(growth, equity, previous=None, turnover=0.0, cost=0.0):
    return StepOutcome.from_growth(
        growth, equity=equity, turnover=turnover, cost=cost, previous_equity=previous
    )


def test_from_growth_floors_and_returns_python_floats():
    o = outcome(0.0, 0.0, previous=1.0)
    assert o.log_return == pytest.approx(np.log(1e-12))
    assert o.simple_return == pytest.approx(-1.0)
    assert o.pnl == -1.0
    assert all(type(v) is float for v in (o.log_return, o.simple_return, o.equity))


def test_from_growth_keeps_arrays_for_batches():
    o = outcome(np.array([1.1, 0.9]), np.array([1.1, 0.9]), previous=np.ones(2))
    assert o.log_return.shape == (2,) and o.pnl == pytest.approx([0.1, -0.1])


def test_simple_rewards():
    o = outcome(1.1, 1.1, previous=1.0, turnover=0.5)
    assert LogReturn()(o) == pytest.approx(np.log(1.1))
    assert SimpleReturn()(o) == pytest.approx(0.1)
    assert ProfitAndLoss()(o) == pytest.approx(0.1)
    assert TurnoverPenalty()(o) == 0.5
    assert MeanVariance(2.0)(o) == pytest.approx(np.log(1.1) - np.log(1.1) ** 2)


def test_pnl_is_recovered_without_previous_equity_except_after_a_wipe_out():
    assert ProfitAndLoss()(outcome(1.1, 1.1)) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="wiped-out"):
        ProfitAndLoss()(outcome(0.0, 0.0))


def test_mean_variance_and_sharpe_parameters_are_checked():
    with pytest.raises(ValueError):
        MeanVariance(-1.0)
    with pytest.raises(ValueError):
        DifferentialSharpe(1.0)


@pytest.mark.parametrize("eta", [10**400, np.nan, np.inf], ids=["huge", "nan", "inf"])
def test_differential_sharpe_refuses_an_eta_that_is_not_a_finite_float(eta):
    with pytest.raises(ValueError, match=r"eta must be a number in \(0, 1\)"):
        DifferentialSharpe(eta)


def test_composition_repr_and_value():
    reward = LogReturn() - 0.5 * DrawdownPenalty() - 0.001 * TurnoverPenalty()
    assert repr(reward) == "LogReturn() - 0.5 * DrawdownPenalty() - 0.001 * TurnoverPenalty()"
    assert repr(-LogReturn() + 1) == "-LogReturn() + 1"
    o = outcome(1.1, 1.1, turnover=2.0)
    assert reward(o) == pytest.approx(np.log(1.1) - 0.002)
    assert (2 * LogReturn() - LogReturn())(o) == pytest.approx(np.log(1.1))


@pytest.mark.parametrize("growth", [0.5, 1.0, 1.1])
def test_a_number_minus_a_reward_subtracts_the_reward_from_the_number(growth):
    o = outcome(growth, growth)
    assert (1 - LogReturn())(o) == pytest.approx(1 - np.log(growth))
    assert (0.5 - 2 * LogReturn())(o) == pytest.approx(0.5 - 2 * np.log(growth))
    assert repr(1 - LogReturn()) == "1 - LogReturn()"
    assert repr(0.5 - 2 * LogReturn()) == "0.5 - 2 * LogReturn()"


def test_drawdown_penalty_tracks_deepening_only():
    penalty = DrawdownPenalty()
    values = [penalty(outcome(1.0, e)) for e in (1.2, 0.9, 1.0, 0.6, 1.3)]
    assert values == pytest.approx([0.0, 0.25, 0.0, 1 / 3, 0.0])


def test_stateful_reset_with_mask_touches_only_masked_envs():
    penalty = DrawdownPenalty()
    penalty(outcome(np.ones(2), np.array([2.0, 2.0])))
    penalty(outcome(np.ones(2), np.array([1.0, 1.0])))
    penalty.reset(np.array([True, False]))
    value = penalty(outcome(np.ones(2), np.array([0.5, 0.5])))
    assert value == pytest.approx([0.5, 0.25])


def test_combination_resets_all_stateful_parts():
    reward = LogReturn() - DrawdownPenalty()
    reward(outcome(1.0, 2.0))
    reward(outcome(1.0, 1.0))
    reward.reset()
    assert reward(outcome(1.0, 1.0)) == pytest.approx(0.0)


def test_a_stateful_reward_used_twice_advances_once_per_step():
    shared = DrawdownPenalty()
    twice, doubled = shared + shared, 2 * DrawdownPenalty()
    for equity in (1.2, 0.9, 1.0, 0.6):
        assert twice(outcome(1.0, equity)) == pytest.approx(doubled(outcome(1.0, equity)))
    assert twice(outcome(1.0, 0.3)) == pytest.approx(0.5)  # 2 * (0.75 - 0.5): deeper by 0.25
    sharpe = DifferentialSharpe(0.1)
    mixed = sharpe - 0.5 * sharpe
    alone = DifferentialSharpe(0.1)
    for growth in (1.01, 0.98, 1.03):
        assert mixed(outcome(growth, 1.0)) == pytest.approx(0.5 * alone(outcome(growth, 1.0)))


def test_differential_sharpe_by_hand():
    reward = DifferentialSharpe(eta=0.5)
    assert reward(outcome(1.1, 1.1)) == 0.0  # B - A^2 = 0 at the start
    # after one update: A = 0.05, B = 0.005
    a, b, r = 0.05, 0.005, -0.1
    expected = (b * (r - a) - 0.5 * a * (r * r - b)) / (b - a * a) ** 1.5
    assert reward(outcome(0.9, 1.0)) == pytest.approx(expected)


def test_deep_copy_does_not_share_state():
    penalty = DrawdownPenalty()
    penalty(outcome(1.0, 2.0))
    clone = copy.deepcopy(penalty)
    penalty(outcome(1.0, 1.0))
    assert clone(outcome(1.0, 2.0)) == 0.0


def test_period_reward_log_return_fast_path_matches_the_step_outcome_value():
    kw = {"equity": 1.02, "turnover": 0.5, "cost": 0.001, "previous_equity": 1.0}
    for growth in (1.02, 0.97, 0.0):
        fast = period_reward(LogReturn(), growth, **kw)
        assert type(fast) is float
        assert fast == float(LogReturn()(StepOutcome.from_growth(growth, **kw)))
    batch = period_reward(LogReturn(), np.array([1.02, 0.0]), **kw)
    np.testing.assert_array_equal(batch, [np.log(1.02), np.log(1e-12)])


def test_period_reward_calls_other_rewards_with_the_step_outcome():
    kw = {"equity": 1.02, "turnover": 0.5, "cost": 0.001, "previous_equity": 1.0}
    reward = period_reward(SimpleReturn() - 0.1 * TurnoverPenalty(), 1.02, **kw)
    assert type(reward) is float
    assert reward == pytest.approx(0.02 - 0.1 * 0.5)
    batch = period_reward(
        ProfitAndLoss(), np.array([1.02, 0.9]), **{**kw, "equity": np.array([1.02, 0.9])}
    )
    np.testing.assert_allclose(batch, [0.02, -0.1])
