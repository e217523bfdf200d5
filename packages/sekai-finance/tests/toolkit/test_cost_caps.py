"""SquareRootImpact's cap (finance.md §6): per asset ``min(c·σ_i·sqrt(q_i / V_i), 1)·|trade_i|``
with ``q_i = |trade_i|·equity``. The cap bounds the impact *rate* at 1 (a trade never costs more
than its own value) and applies with a positive volume too, not only when the volume is missing.
"""

from __future__ import annotations

import math

import numpy as np

from sekai.finance.costs import SquareRootImpact


def test_impact_is_capped_at_one_with_a_positive_volume() -> None:
    """Asset 0 trades 50 % of a 1e6 account into a volume of 1e4: the uncapped rate is
    ``0.5·0.5·sqrt(5e5 / 1e4) ≈ 1.77``, so it costs exactly its traded value, 0.5. Asset 1 is
    far below the cap. Catches no cap (0.884 for asset 0), the cap applied to the cost rather
    than the rate (``min(1.77·0.5, 1) = 0.884``), the cap applied to the row's total, and a
    positive volume treated like a missing one (asset 1 would cost its whole 0.2)."""
    model = SquareRootImpact(0.5)
    rate_1 = 0.5 * 0.02 * math.sqrt(0.2 * 1e6 / 1e8)
    assert 0.5 * 0.5 * math.sqrt(0.5 * 1e6 / 1e4) > 1.7 and rate_1 < 1e-3  # one capped, one not
    cost = model([0.5, -0.2], equity=1e6, volatility=[0.5, 0.02], volume=[1e4, 1e8])
    assert abs(float(cost) - (0.5 + rate_1 * 0.2)) < 1e-15


def test_cap_binds_exactly_at_rate_one_and_not_before() -> None:
    """At a rate of exactly 1 the cost is the trade; at a rate of 1/1.1 the formula still
    applies. Catches a cap set below 1 (a rate of 0.9 would already be clipped by a 0.9 cap)."""
    # c·σ·sqrt(q / V) = 0.5 · 0.4 · sqrt(0.25·1e6 / 1e4) = 0.5 · 0.4 · 5 = 1.0
    at_one = SquareRootImpact(0.5)([0.25], equity=1e6, volatility=[0.4], volume=[1e4])
    assert float(at_one) == 0.25
    below = SquareRootImpact(0.5)([0.25], equity=1e6, volatility=[0.4], volume=[1.21e4])
    assert abs(float(below) - 0.5 * 0.4 * math.sqrt(0.25e6 / 1.21e4) * 0.25) < 1e-15
    assert float(below) < 0.25


def test_cap_is_per_asset_and_per_batch_row() -> None:
    """A batch of two rows (a native env's sub-envs): each row's capped asset costs its own
    trade. Catches the cap broadcast across rows or assets."""
    trades = np.array([[0.5, 0.1], [0.05, 0.3]])
    volatility = np.array([[0.5, 0.01], [0.01, 0.5]])
    volume = np.array([[1e4, 1e8], [1e8, 1e4]])
    equity = np.array([1e6, 2e6])
    cost = SquareRootImpact(0.5)(trades, equity=equity, volatility=volatility, volume=volume)
    expected = [
        0.5 + 0.5 * 0.01 * math.sqrt(0.1 * 1e6 / 1e8) * 0.1,
        0.5 * 0.01 * math.sqrt(0.05 * 2e6 / 1e8) * 0.05 + 0.3,
    ]
    assert cost.shape == (2,)
    assert np.allclose(cost, expected, rtol=1e-14, atol=0.0)
