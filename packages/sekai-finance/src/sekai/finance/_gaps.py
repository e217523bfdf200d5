"""Gaps in a price panel: missing prices inside an asset's listed life.

A NaN price means "not listed". Before an asset's first price it has not listed yet and after
its last it has delisted; a NaN between two prices is a gap (a halt, a hole in the data), which
Market-v0 would otherwise take for a delisting followed by a new listing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from sekai.finance.data import MarketData

__all__ = ["Gap", "fill_gaps", "listing_gaps", "refuse_gaps"]

_SHOWN = 3  # gaps named in the message


class Gap(NamedTuple):
    """Rows ``start .. stop - 1`` of asset column ``column`` have no price, with a price on
    both sides."""

    column: int
    start: int
    stop: int


def listing_gaps(prices: np.ndarray) -> list[Gap]:
    """Every gap of a ``(T, N)`` panel, by column then row."""
    listed = np.isfinite(prices)
    gaps: list[Gap] = []
    for column in np.flatnonzero(listed.any(axis=0)).tolist():
        rows = np.flatnonzero(listed[:, column])
        jumps = np.flatnonzero(np.diff(rows) > 1)  # a listed row followed by missing ones
        gaps.extend(Gap(column, int(rows[j]) + 1, int(rows[j + 1])) for j in jumps.tolist())
    return gaps


def fill_gaps(prices: np.ndarray, limit: int | None) -> np.ndarray:
    """A copy of ``prices`` with each gap of at most ``limit`` rows (any gap: None) filled
    with the last price before it."""
    filled: np.ndarray = prices.copy()
    for gap in listing_gaps(prices):
        if limit is None or gap.stop - gap.start <= limit:
            filled[gap.start : gap.stop, gap.column] = prices[gap.start - 1, gap.column]
    return filled


def refuse_gaps(data: MarketData, env: str) -> None:
    """``ValueError`` naming the first gaps of ``data`` (asset, rows, timestamps), if any:
    ``env`` would read each one as a delisting and never book the move across it."""
    gaps = listing_gaps(data.prices)
    if not gaps:
        return
    times = data.timestamps

    def where(gap: Gap) -> str:
        rows = (
            f"row {gap.start}" if gap.stop - gap.start == 1 else f"rows {gap.start}..{gap.stop - 1}"
        )
        span = (
            f"{times[gap.start]}"
            if gap.stop - gap.start == 1
            else (f"{times[gap.start]} .. {times[gap.stop - 1]}")
        )
        return f"asset {data.assets[gap.column]!r} at {rows} ({span})"

    shown = "; ".join(where(g) for g in gaps[:_SHOWN])
    more = f" and {len(gaps) - _SHOWN} more" if len(gaps) > _SHOWN else ""
    raise ValueError(
        f"{env}: the data has {len(gaps)} gap(s), missing prices between two prices of an "
        f"asset: {shown}{more}. {env} reads a missing price as a delisting (the asset is sold at "
        "delisting_return and the move across the gap is never booked). Fill them with "
        "data.fill_gaps(limit=...) (the last price carries through the gap) or, if an asset "
        "really delisted and listed again, give each listing its own column."
    )
