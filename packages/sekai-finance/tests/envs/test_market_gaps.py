"""Market-v0 and gaps in the data (finance.md §12.5; issue 30).

A missing price between two prices of an asset is a gap, not a delisting: read as one, the
asset was sold at ``delisting_return`` and the move across the gap never booked. Market-v0 now
refuses such data, naming the asset, the rows and the timestamps; ``MarketData.fill_gaps()``
carries the last price through the gaps (up to ``limit`` rows), after which the move across a
gap is earned when the asset trades again. Leading and trailing NaN (not yet listed, delisted)
are not gaps.
"""

from __future__ import annotations

import numpy as np
import pytest

from sekai.envs.finance.market import MarketEnv
from sekai.finance import MarketData

NAN = np.nan


def gapped(gap_rows: slice = slice(4, 6)) -> np.ndarray:
    """Asset 'A' is 100 until row 5 and 120 from row 6 on, missing in ``gap_rows``; 'B' is
    flat at 50 and delists after row 9; 'C' lists at row 3."""
    prices = np.empty((14, 3))
    prices[:, 0] = np.where(np.arange(14) < 6, 100.0, 120.0)
    prices[gap_rows, 0] = NAN
    prices[:, 1] = 50.0
    prices[10:, 1] = NAN
    prices[:, 2] = 10.0
    prices[:3, 2] = NAN
    return prices


def data_of(prices: np.ndarray) -> MarketData:
    return MarketData(prices, assets=["A", "B", "C"], timestamps=np.arange(100, 114))


def test_a_gap_is_refused_naming_the_asset_rows_and_timestamps() -> None:
    with pytest.raises(ValueError, match=r"asset 'A' at rows 4\.\.5 \(104 \.\. 105\)") as info:
        MarketEnv(data_of(gapped()), lookback=2, episode_length=5)
    assert "fill_gaps" in str(info.value) and "delisting" in str(info.value)


def test_every_gap_is_counted_and_the_first_ones_named() -> None:
    prices = gapped(slice(4, 5))
    prices[[7, 9, 11], 2] = NAN
    with pytest.raises(ValueError, match=r"4 gap\(s\).*asset 'A' at row 4 \(104\);.* 1 more"):
        MarketEnv(data_of(prices), lookback=2, episode_length=5)


def test_listing_and_delisting_are_not_gaps() -> None:
    prices = gapped()
    prices[4:6, 0] = 100.0
    MarketEnv(data_of(prices), lookback=2, episode_length=5)  # B delists, C lists: accepted


def test_fill_gaps_books_the_move_across_the_gap() -> None:
    """All in 'A' from row 2 through the gap (rows 4-5): the jump from 100 to 120 at row 6 is
    earned. Read as a delisting at row 3, the same episode ended at equity 1.0 in cash."""
    data = data_of(gapped()).fill_gaps()
    assert data.prices[:, 0].tolist()[2:8] == [100.0, 100.0, 100.0, 100.0, 120.0, 120.0]
    env = MarketEnv(data, lookback=2, episode_length=6, transaction_cost=0.0)
    env.reset(options={"start": 2})  # first decision at row 2
    action = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    for _ in range(6):
        result = env.step(action)
    assert result.info["equity"] == pytest.approx(1.2, rel=1e-12)


def test_fill_gaps_leaves_listing_delisting_and_gaps_over_the_limit() -> None:
    prices = gapped(slice(4, 6))
    prices[8, 2] = NAN  # a one-row gap in C
    filled = data_of(prices).fill_gaps(limit=1)
    assert np.isnan(filled.prices[4:6, 0]).all()  # two rows: over the limit
    assert filled.prices[8, 2] == 10.0
    assert np.isnan(filled.prices[10:, 1]).all() and np.isnan(filled.prices[:3, 2]).all()
    with pytest.raises(ValueError, match=r"asset 'A' at rows 4\.\.5"):
        MarketEnv(filled, lookback=2, episode_length=5)
    with pytest.raises(ValueError, match="limit"):
        data_of(prices).fill_gaps(limit=0)
