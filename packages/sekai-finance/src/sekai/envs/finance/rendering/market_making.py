"""MarketMakingRenderer and its text renderer: MarketMaking-v0 as a dashboard and text lines."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.envs.finance.rendering._base import (
    FinanceRenderer,
    FinanceTextRenderer,
    StepMemory,
    format_price,
    signed,
)
from sekai.finance.rendering import Column, LineChart, PriceChart, Row, Series, Stat
from sekai.finance.rendering._format import format_pct

__all__ = ["MarketMakingRenderer", "MarketMakingTextRenderer"]


def _quotes(env: MarketMakingEnv) -> tuple[float, float]:
    return float(env.bid), float(env.ask)


def _bought(env: MarketMakingEnv) -> float | None:
    return float(env.bid) if env.bid_filled else None


def _sold(env: MarketMakingEnv) -> float | None:
    return float(env.ask) if env.ask_filled else None


def _time_left(env: MarketMakingEnv) -> float:
    return 1.0 - float(env.elapsed_steps) / float(env.n_steps)


class MarketMakingRenderer(FinanceRenderer):
    """Draws a ``MarketMakingEnv`` (wrapped or not) as a ``(height, width, 3)`` uint8 dashboard.

    Header: P&L, inventory, the quoted spread and the session time left. Charts: the mid price
    with the bid and ask quoted over each step around it and the fills (up-triangle: the bid was
    filled, a buy; down-triangle: the ask was filled, a sell); the inventory (a step line); the
    P&L (wealth marked at the mid).

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole session).
    """

    env_type = MarketMakingEnv
    env_title = "MarketMaking-v0"

    def _build(self) -> Column:
        return Column(
            PriceChart(
                "mid", quotes=_quotes, buys=_bought, sells=_sold, title="Mid price and quotes",
                height=1.5,
            ),
            Row(
                LineChart([Series("inventory", style="step", color="accent")], title="Inventory",
                          baseline=0.0),
                LineChart([Series("wealth", color="accent")], title="P&L", baseline=0.0,
                          drawdown=True, tag=True),
            ),
        )  # fmt: skip

    def horizon(self, env: Any) -> int | None:
        return int(env.n_steps)

    def subtitle(self, env: Any) -> str:
        return (
            f"Avellaneda–Stoikov market making: sigma {env.sigma:g}, A {env.A:g}, k {env.k:g}, "
            f"gamma {env.risk_aversion:g}, inventory limit {env.max_inventory}"
        )

    def stats(self, env: Any) -> Sequence[Stat]:
        wealth = float(env.wealth)
        tone = "up" if wealth > 0 else ("down" if wealth < 0 else None)
        spread = float(env.ask) - float(env.bid)
        return [
            Stat("P&L", signed(wealth, 4), tone=tone),
            Stat("Inventory", f"{int(env.inventory):+d}" if env.inventory else "0"),
            Stat("Spread", "-" if math.isnan(spread) else f"{spread:.3f}"),
            Stat("Time left", format_pct(_time_left(env), 0)),
        ]


def _no_wealth(env: Any) -> float:
    """Wealth at the session start: no cash, no inventory."""
    return 0.0


class MarketMakingTextRenderer(FinanceTextRenderer):
    """Describes a ``MarketMakingEnv`` as one text line per call: step, time, mid, the quotes
    and fills of the step, inventory, wealth and the step's reward (recomputed exactly from the
    state: the change of wealth minus the inventory penalty)."""

    env_type = MarketMakingEnv
    env_title = "MarketMaking-v0"

    def __init__(self) -> None:
        super().__init__()
        self._wealth: StepMemory[float] = StepMemory(_no_wealth)

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), ("time", 6), ("mid", 9), ("bid", 9), ("ask", 9), ("fills", 5),
                ("inventory", 9), ("wealth", 9), ("reward", 9)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        wealth = float(env.wealth)
        previous = self._wealth.remember(env, step, wealth, new_episode=new_episode)
        q = int(env.inventory)
        if previous is None:  # the session start, or the previous step was not rendered
            reward = "-"
        else:
            value = wealth - previous - 0.5 * env.risk_aversion * env.sigma**2 * env.dt * q * q
            if step >= env.n_steps:
                value -= env.terminal_penalty * q * q
            reward = f"{value:+.4f}"
        fills = ("B" if env.bid_filled else "") + ("S" if env.ask_filled else "")
        bid, ask = float(env.bid), float(env.ask)
        return [
            str(step), f"{step * env.dt:.3f}", format_price(float(env.mid)),
            "-" if math.isnan(bid) else format_price(bid),
            "-" if math.isnan(ask) else format_price(ask),
            fills or "-", f"{q:+d}" if q else "0", f"{wealth:+.3f}", reward,
        ]  # fmt: skip
