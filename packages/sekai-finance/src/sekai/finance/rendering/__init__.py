"""Reusable finance charts (price, order book, universe, lines, areas, bars) and dashboards.

The finance renderers of ``sekai.envs.finance`` are built from these; combine them into your
own dashboard with ``Dashboard(Row(...), ...)``. Every data "source" is the name of an env
attribute (the finance envs expose their state as attributes, e.g. ``"equity"``, ``"mid"``) or
a callable of the env.
"""

from __future__ import annotations

from sekai.finance.rendering.book import OrderBookChart
from sekai.finance.rendering.chart import Chart, Column, DrawContext, Row, Source
from sekai.finance.rendering.composition import AreaChart, BarChart
from sekai.finance.rendering.dashboard import Dashboard, Stat
from sekai.finance.rendering.lines import LineChart, Series
from sekai.finance.rendering.price import PriceChart
from sekai.finance.rendering.universe import UniverseChart

__all__ = [
    "AreaChart",
    "BarChart",
    "Chart",
    "Column",
    "Dashboard",
    "DrawContext",
    "LineChart",
    "OrderBookChart",
    "PriceChart",
    "Row",
    "Series",
    "Source",
    "Stat",
    "UniverseChart",
]
