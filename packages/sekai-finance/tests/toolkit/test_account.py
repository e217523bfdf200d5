"""Account accounting: project_weights, settle, turnover."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sekai.finance.account import AccountConfig, project_weights, settle, turnover


def test_config_validation():
    with pytest.raises(ValueError):
        AccountConfig(max_leverage=0.0)
    with pytest.raises(ValueError):
        AccountConfig(borrow_rate=-0.1)
    with pytest.raises(ValueError):
        AccountConfig(cash_rate=np.inf)
    assert AccountConfig(cash_rate=0.02).effective_margin_rate == 0.02
    assert AccountConfig(cash_rate=0.02, margin_rate=0.05).effective_margin_rate == 0.05


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(10**400, id="huge"),
        pytest.param(-(10**400), id="-huge"),
        pytest.param(np.nan, id="nan"),
        pytest.param(-np.inf, id="-inf"),
    ],
)
@pytest.mark.parametrize("name", ["max_leverage", "cash_rate", "margin_rate", "borrow_rate"])
def test_config_refuses_numbers_that_are_not_finite_floats_naming_them(name, value):
    with pytest.raises(ValueError, match=f"^{name} must be a finite number"):
        AccountConfig(**{name: value})


def test_config_says_an_int_beyond_float64_is_too_large():
    with pytest.raises(ValueError, match="> 0, got an int too large for a float64"):
        AccountConfig(max_leverage=10**400)


def test_config_refuses_non_numbers_with_type_error():
    with pytest.raises(TypeError, match="max_leverage must be a finite number > 0, got str"):
        AccountConfig(max_leverage="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="margin_rate must be a finite number, got bool"):
        AccountConfig(margin_rate=True)


def test_long_only_projection_normalises_with_cash_score():
    w = project_weights([1.0, -1.0, 1.0], [True, True, True], AccountConfig(), cash_score=2.0)
    assert w.tolist() == [0.25, 0.0, 0.25]


def test_long_only_projection_all_zero_is_cash_and_untradable_is_zero():
    assert project_weights([0.0, 0.0], True, AccountConfig()).tolist() == [0.0, 0.0]
    assert project_weights([1.0, 1.0], [True, False], AccountConfig()).tolist() == [1.0, 0.0]


def test_long_short_projection_scales_gross_to_leverage():
    config = AccountConfig(allow_short=True, max_leverage=1.0)
    assert project_weights([3.0, -1.0], True, config).tolist() == [0.5, -0.5]
    assert project_weights([0.2, -0.3], True, config).tolist() == [0.2, -0.3]


def test_long_short_projection_of_subnormal_scores_is_exact_and_warning_free():
    # A gross exposure of 1e-313 once overflowed lev / gross (warnings are errors here).
    tiny = np.array([2.2250738585e-313, -1e-320])
    weights = project_weights(tiny, np.array([True, True]), AccountConfig(allow_short=True))
    np.testing.assert_array_equal(weights, tiny)


def test_settle_one_step_by_hand():
    config = AccountConfig(cash_rate=0.05, borrow_rate=0.01)
    result = settle([0.5, 0.25], [0.1, -0.2], cost=0.001, dt=0.5, config=config)
    financing = 0.25 * 0.05 * 0.5
    gross = 1 + 0.05 - 0.05 + financing
    assert result.financing == pytest.approx(financing)
    assert result.growth == pytest.approx(0.999 * gross)
    assert result.drifted == pytest.approx([0.5 * 1.1 / gross, 0.25 * 0.8 / gross])
    assert not result.wiped_out


def test_settle_margin_borrow_and_wipe_out():
    config = AccountConfig(allow_short=True, cash_rate=0.0, margin_rate=0.1, borrow_rate=0.2)
    result = settle([1.5, -0.5], [np.nan, 3.0], cost=0.0, dt=1.0, config=config)
    # cash = 0 -> cash rate; borrow fee on the short leg; NaN return counts as 0
    assert result.financing == pytest.approx(-0.1)
    assert result.growth == pytest.approx(1 - 1.5 - 0.1) and bool(result.wiped_out)
    assert result.drifted.tolist() == [0.0, 0.0]


def test_settle_borrowed_cash_pays_the_margin_rate_and_spare_cash_earns_the_cash_rate():
    config = AccountConfig(allow_short=True, cash_rate=0.02, margin_rate=0.1, max_leverage=2.0)
    levered = settle([1.2, 0.3], [0.0, 0.0], cost=0.0, dt=0.5, config=config)
    assert levered.financing == pytest.approx(-0.5 * 0.1 * 0.5)  # cash -0.5 at 10 % a year
    assert levered.growth == pytest.approx(1 - 0.025)
    saver = settle([0.2, 0.3], [0.0, 0.0], cost=0.0, dt=0.5, config=config)
    assert saver.financing == pytest.approx(0.5 * 0.02 * 0.5)  # cash +0.5 at 2 % a year


def test_settle_cost_of_one_wipes_out_and_broadcasts():
    result = settle(
        np.full((3, 2), 0.5), np.zeros((3, 2)), cost=[0.0, 1.0, 0.5], dt=1.0, config=AccountConfig()
    )
    assert result.growth.tolist() == [1.0, 0.0, 0.5]
    assert result.wiped_out.tolist() == [False, True, False]


def test_settle_names_weights_and_returns_of_different_lengths():
    # one weight and one return per asset: NumPy's broadcast error named neither
    message = (
        "weights and returns must hold one entry per asset, with shapes (..., n) that broadcast "
        "together, got weights of shape (2,) and returns of shape (3,)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        settle([0.5, 0.1], [0.01, 0.02, 0.03], cost=0.0, dt=1 / 252, config=AccountConfig())
    message = (
        "cost must hold one entry per account, with a shape that broadcasts with the batch shape "
        "(2,) of weights (2, 2) and returns (2,), got shape (3,)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        settle(np.full((2, 2), 0.5), [0.01, 0.02], cost=np.zeros(3), dt=1.0, config=AccountConfig())


def test_turnover_excludes_cash():
    assert turnover([0.5, 0.5], [0.0, 1.0]) == 1.0
    assert turnover(np.ones((2, 3)), np.zeros((2, 3))).tolist() == [3.0, 3.0]


def test_settle_and_project_check_their_inputs():
    config = AccountConfig()
    with pytest.raises(TypeError, match="config must be an AccountConfig, got NoneType"):
        settle([0.5], [0.1], cost=0.0, dt=1 / 252, config=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be an AccountConfig"):
        project_weights([1.0, 1.0], [True, True], None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dt must be a finite number >= 0, got nan"):
        settle([0.5], [0.1], cost=0.0, dt=float("nan"), config=config)
    with pytest.raises(ValueError, match="returns must be finite, or NaN"):
        settle([0.5], [np.inf], cost=0.0, dt=1 / 252, config=config)
    with pytest.raises(TypeError, match="weights must be real numbers, not bools"):
        settle([True], [0.1], cost=0.0, dt=1 / 252, config=config)
    missing = settle([0.5], [np.nan], cost=0.0, dt=1 / 252, config=config)  # NaN counts as 0
    assert float(missing.growth) == 1.0
