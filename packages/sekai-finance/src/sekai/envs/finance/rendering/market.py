"""MarketRenderer and MarketTextRenderer: Market-v0 as a dashboard and as text lines."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sekai.envs.finance.market import MarketEnv
from sekai.envs.finance.rendering._base import (
    FinanceRenderer,
    GrowthTextRenderer,
    change,
    describe_costs,
    describe_market,
    format_time,
)
from sekai.finance.rendering import (
    BarChart,
    Column,
    LineChart,
    Row,
    Series,
    Stat,
    UniverseChart,
)
from sekai.finance.rendering._format import format_pct
from sekai.finance.rendering._paint import mix

__all__ = ["MarketRenderer", "MarketTextRenderer", "slot_labels"]


def slot_labels(env: MarketEnv) -> list[str | None]:
    """The asset in each slot as text (``Asset i`` for simulated columns), None where empty."""
    labels: list[str | None] = []
    for asset in env.slot_assets:
        if asset is None:
            labels.append(None)
        elif env.data is None or isinstance(asset, (int, np.integer)):
            labels.append(f"Asset {int(asset)}")
        else:
            labels.append(str(asset))
    return labels


def _tradable(env: MarketEnv) -> np.ndarray:
    return np.asarray(env.action_mask()[: env.max_assets], dtype=bool)


def _holdings(env: MarketEnv) -> np.ndarray:
    weights = np.asarray(env.weights, dtype=np.float64)
    return np.append(weights, 1.0 - weights.sum())


def _holding_labels(env: MarketEnv) -> list[str]:
    return [label or "empty" for label in slot_labels(env)] + ["cash"]


class MarketRenderer(FinanceRenderer):
    """Draws a ``MarketEnv`` (wrapped or not) as a ``(height, width, 3)`` uint8 dashboard.

    Header: equity (with its change), gross exposure and how many assets are tradable now.
    Charts: the equity curve (drawdown shaded); the universe (the weight held in each slot over
    time, greyed where the slot was untradable, labelled with the slot's asset and marked where
    it changed hands); the current holdings per slot and cash.

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole episode).
    """

    env_type = MarketEnv
    env_title = "Market-v0"

    def _build(self) -> Callable[[MarketEnv], Column]:
        return self._charts

    def _charts(self, env: MarketEnv) -> Column:
        slots = int(env.max_assets)
        cash = mix(self.theme.background, self.theme.muted, 0.55)
        colors: list[Any] = ["accent"] * slots + [cash]
        return Column(
            LineChart([Series("equity", label="equity", color="accent", width=1.8)],
                      title="Equity", baseline=1.0, drawdown=True, tag=True, height=0.8),
            Row(
                UniverseChart("weights", available=_tradable, labels=slot_labels,
                              title="Universe: weight per slot", width=1.7),
                BarChart(_holdings, labels=_holding_labels, colors=colors, title="Holdings"),
                height=1.3,
            ),
        )  # fmt: skip

    def horizon(self, env: Any) -> int | None:
        return int(env.episode_length)

    def subtitle(self, env: Any) -> str:
        config = env.config
        book = (
            f"long/short, leverage {config.max_leverage:g}"
            if env.allow_short
            else (f"long-only, leverage {config.max_leverage:g}")
        )
        market = describe_market(env, builtin="Simulated market")
        return f"{market}; {env.max_assets} slots, {book}{describe_costs(env)}"

    def stats(self, env: Any) -> Sequence[Stat]:
        equity = float(env.equity)
        detail, tone = change(equity)
        weights = np.asarray(env.weights)
        count = int(_tradable(env).sum())
        stats = [
            Stat("Equity", f"{equity:.4f}", detail, tone),
            Stat("Gross", format_pct(float(np.abs(weights).sum()), 1)),
            Stat("Tradable", f"{count} asset{'s' if count != 1 else ''}"),
        ]
        if env.data is not None and env.data.is_datetime:
            stats.append(Stat("Date", format_time(env.timestamp)))
        return stats


class MarketTextRenderer(GrowthTextRenderer):
    """Describes a ``MarketEnv`` as one text line per call: step, time, equity, gross exposure,
    tradable assets, the largest holding and the step's reward (the log growth, as
    ``TradingTextRenderer``)."""

    env_type = MarketEnv
    env_title = "Market-v0"

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), self._time_column(env), ("equity", 8), ("gross", 7), ("tradable", 8),
                ("top holding", 18), *self._growth_columns(env)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        equity = float(env.equity)
        returns = self._growth(env, equity, step, new_episode)
        weights = np.asarray(env.weights)
        labels = slot_labels(env)
        top = int(np.argmax(np.abs(weights))) if weights.size else 0
        top_text = "-"
        if weights.size and weights[top] != 0:
            top_text = f"{(labels[top] or '?')[:9]} {format_pct(float(weights[top]), 1)}"
        return [str(step), format_time(env.timestamp), f"{equity:.4f}",
                format_pct(float(np.abs(weights).sum()), 1), str(int(_tradable(env).sum())),
                top_text, *returns]  # fmt: skip
