"""PortfolioRenderer and PortfolioTextRenderer: Portfolio-v0 as a dashboard and as text lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.rendering._base import (
    FinanceRenderer,
    GrowthTextRenderer,
    asset_names,
    change,
    describe_costs,
    describe_market,
    format_time,
)
from sekai.finance.rendering import AreaChart, BarChart, Column, LineChart, Row, Series, Stat
from sekai.finance.rendering._format import format_pct
from sekai.finance.rendering._paint import mix

__all__ = ["PortfolioRenderer", "PortfolioTextRenderer"]


def _indexed(i: int, env: PortfolioEnv) -> float:
    """Asset ``i``'s price rebased to 100 at the episode start."""
    history = env.price_history
    return float(100.0 * history[-1, i] / history[env.lookback, i])


def _value(env: PortfolioEnv) -> float:
    return 100.0 * float(env.portfolio_value)


class PortfolioRenderer(FinanceRenderer):
    """Draws a ``PortfolioEnv`` (wrapped or not) as a ``(height, width, 3)`` uint8 dashboard.

    Header: portfolio value (with its change) and the cash weight. Charts: "Performance, indexed
    to 100" (the portfolio and every asset's price rebased to 100 at the episode start),
    "Allocation over time" (stacked weights, cash in grey) and the current "Weights" (bars). An
    asset keeps its colour in every chart; names come from the data, else ``Asset i``.

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole episode).
    """

    env_type = PortfolioEnv
    env_title = "Portfolio-v0"

    def _build(self) -> Callable[[PortfolioEnv], Column]:
        return self._charts

    def _charts(self, env: PortfolioEnv) -> Column:
        n = int(env.n_assets)
        names = asset_names(env, n)
        cash = mix(self.theme.background, self.theme.muted, 0.55)
        colors: list[Any] = [*range(n), cash]
        lines = [Series(partial(_indexed, i), label=names[i], color=i, width=1.0) for i in range(n)]
        lines.append(Series(_value, label="portfolio", color="foreground", width=2.2))
        return Column(
            LineChart(
                lines,
                title="Performance, indexed to 100",
                baseline=100.0,
                tag=True,
                primary=n,
                height=1.3,
            ),
            Row(
                AreaChart("weights", colors=colors, title="Allocation over time", width=1.6),
                BarChart("weights", labels=[*names, "cash"], colors=colors, title="Weights"),
            ),
        )

    def horizon(self, env: Any) -> int | None:
        return int(env.episode_length)

    def subtitle(self, env: Any) -> str:
        n = int(env.n_assets)
        sigma = np.atleast_1d(env.sigma)
        vol = (
            f"volatility {float(sigma.min()):.3g}-{float(sigma.max()):.3g}"
            if sigma.min() != sigma.max()
            else f"volatility {float(sigma[0]):.3g}"
        )
        builtin = f"Simulated correlated GBM, {n} assets, {vol}"
        return describe_market(env, builtin=builtin) + describe_costs(env)

    def stats(self, env: Any) -> Sequence[Stat]:
        value = float(env.portfolio_value)
        detail, tone = change(value)
        weights = np.asarray(env.weights)
        stats = [
            Stat("Value", f"{value:.4f}", detail, tone),
            Stat("Cash", format_pct(float(weights[-1]), 1)),
        ]
        gross = float(np.abs(weights[:-1]).sum())
        if env.allow_short:
            stats.append(Stat("Gross", format_pct(gross, 1)))
        if env.data is not None and env.data.is_datetime:
            stats.append(Stat("Date", format_time(env.timestamp)))
        return stats


class PortfolioTextRenderer(GrowthTextRenderer):
    """Describes a ``PortfolioEnv`` as one text line per call: step, time, value, the cash and
    largest weights, and the step's reward (the log growth, as ``TradingTextRenderer``)."""

    env_type = PortfolioEnv
    env_title = "Portfolio-v0"

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), self._time_column(env), ("value", 8), ("cash", 7), ("top weight", 18),
                *self._growth_columns(env)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        value = float(env.portfolio_value)
        returns = self._growth(env, value, step, new_episode)
        weights = np.asarray(env.weights)
        names = asset_names(env, int(env.n_assets))
        top = int(np.argmax(np.abs(weights[:-1])))
        top_text = f"{names[top][:9]} {format_pct(float(weights[top]), 1)}"
        return [str(step), format_time(env.timestamp), f"{value:.4f}",
                format_pct(float(weights[-1]), 1), top_text, *returns]  # fmt: skip
