"""The order book engine: price-time-priority matching and background order flow."""

from __future__ import annotations

from sekai.finance.lob.book import OrderBook
from sekai.finance.lob.flow import OrderFlow, StaticFlow, ZeroIntelligenceFlow
from sekai.finance.lob.orders import BACKGROUND, Fill, Order, Side

__all__ = [
    "BACKGROUND",
    "Fill",
    "Order",
    "OrderBook",
    "OrderFlow",
    "Side",
    "StaticFlow",
    "ZeroIntelligenceFlow",
]
