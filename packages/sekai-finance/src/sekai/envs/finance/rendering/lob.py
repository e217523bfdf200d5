"""LimitOrderBookRenderer and its text renderer: LimitOrderBook-v0 as a dashboard and text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sekai.envs.finance.lob import LimitOrderBookEnv
from sekai.envs.finance.rendering._base import (
    BookRenderer,
    FinanceTextRenderer,
    StepMemory,
    format_price,
)
from sekai.finance.rendering import (
    Column,
    LineChart,
    OrderBookChart,
    PriceChart,
    Row,
    Series,
    Stat,
)
from sekai.finance.rendering._format import format_pct

__all__ = [
    "LimitOrderBookRenderer",
    "LimitOrderBookTextRenderer",
    "NetFills",
    "flow_subtitle",
    "step_reward",
]


def best_quotes(env: Any) -> tuple[float, float]:
    """The market's best bid and ask (NaN for an empty side)."""
    bid, ask = env.book.best_bid(), env.book.best_ask()
    return (math.nan if bid is None else float(bid)), (math.nan if ask is None else float(ask))


def flow_subtitle(env: Any) -> str:
    """``Zero-intelligence order flow`` (the default), else the flow's class, with the limits."""
    flow = getattr(env, "flow", None) or getattr(getattr(env, "params", None), "flow", None)
    name = type(flow).__name__
    what = "Zero-intelligence order flow" if name == "ZeroIntelligenceFlow" else f"{name} flow"
    if flow is not None and name == "ZeroIntelligenceFlow":
        what += (
            f" (limit {flow.limit_rate:g}, market {flow.market_rate:g}, cancel "
            f"{flow.cancel_rate:g} per unit time)"
        )
    return what


def _owner(env: LimitOrderBookEnv) -> int:
    return int(getattr(getattr(env, "trader", None), "owner", 0))


def _own_orders(env: LimitOrderBookEnv) -> dict[int, str]:
    return {_owner(env): "You"}


def _flat(env: Any) -> tuple[int, float]:
    """Inventory and cash at the session start: flat, no cash."""
    return 0, 0.0


def step_reward(env: Any, change: float, q: int, dt: float, last: bool) -> str:
    """A step's reward as the order-book envs compute it, as text: the change of wealth less
    ``inventory_penalty * q**2 * dt``, and less ``terminal_penalty * q**2`` on the session's
    last step (``last``)."""
    value = change - env.inventory_penalty * q * q * dt
    if last:
        value -= env.terminal_penalty * q * q
    return f"{value:+.3f}"


def _no_wealth_at_0(env: Any) -> tuple[float, float]:
    """Wealth and time at the session start."""
    return 0.0, 0.0


class NetFills:
    """The agent's net trade in each step, recovered from its inventory and cash.

    A step that bought ``q > 0`` lots net for ``c`` ticks of cash traded at ``c / q`` on
    average (and symmetrically for a sale); a step whose buys and sells cancel out shows none.
    """

    def __init__(self) -> None:
        self._seen: StepMemory[tuple[int, float]] = StepMemory(_flat)

    def _net(self, env: Any) -> tuple[int, float]:
        inventory, cash = int(env.inventory), float(env.cash)
        before = self._seen.remember(env, int(env.elapsed_steps), (inventory, cash))
        if before is None:
            return 0, 0.0
        return inventory - before[0], cash - before[1]

    def bought(self, env: Any) -> float | None:
        """Average price of the step's net purchase, or None."""
        quantity, cash = self._net(env)
        return -cash / quantity if quantity > 0 else None

    def sold(self, env: Any) -> float | None:
        """Average price of the step's net sale, or None."""
        quantity, cash = self._net(env)
        return -cash / quantity if quantity < 0 else None


class LimitOrderBookRenderer(BookRenderer):
    """Draws a ``LimitOrderBookEnv`` (wrapped or not) as a ``(height, width, 3)`` dashboard.

    Header: wealth (ticks), inventory, the market's spread (ticks) and the session left.
    Charts: the mid price with the market's best bid/ask band and the agent's net fills
    (triangles at their average price); the inventory; the wealth; the order book's depth
    ladder (``levels`` per side) with the agent's resting orders highlighted ("You") at their
    place in the queue.

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole session).
        levels: price levels per side in the depth ladder.
    """

    env_type = LimitOrderBookEnv
    env_title = "LimitOrderBook-v0"

    def _build(self) -> Row:
        fills = NetFills()
        return Row(
            Column(
                PriceChart("mid", spread=best_quotes, buys=fills.bought, sells=fills.sold,
                           title="Mid price (ticks)", height=1.5),
                Row(
                    LineChart([Series("inventory", style="step", color="accent")],
                              title="Inventory", baseline=0.0),
                    LineChart([Series("wealth", color="accent")], title="Wealth (ticks)",
                              baseline=0.0, tag=True),
                ),
                width=1.9,
            ),
            OrderBookChart("book", owners=_own_orders, levels=self.levels),
        )  # fmt: skip

    def horizon(self, env: Any) -> int | None:
        return int(env.n_steps)

    def subtitle(self, env: Any) -> str:
        return flow_subtitle(env)

    def stats(self, env: Any) -> Sequence[Stat]:
        wealth = float(env.wealth)
        tone = "up" if wealth > 0 else ("down" if wealth < 0 else None)
        spread = env.book.spread()
        left = float(env.time_remaining) / env.session_length
        return [
            Stat("Wealth", f"{wealth:+.1f}" if wealth else "0", tone=tone),
            Stat("Inventory", f"{int(env.inventory):+d}" if env.inventory else "0"),
            Stat("Spread", "-" if spread is None else f"{int(spread)}"),
            Stat("Session left", format_pct(min(left, 1.0), 0)),
        ]


class LimitOrderBookTextRenderer(FinanceTextRenderer):
    """Describes a ``LimitOrderBookEnv`` as one text line per call: step, time, mid, spread,
    inventory, cash, wealth and the step's reward (recomputed exactly from the state: the
    change of wealth minus the inventory penalty, and the terminal penalty on the last step)."""

    env_type = LimitOrderBookEnv
    env_title = "LimitOrderBook-v0"

    def __init__(self) -> None:
        super().__init__()
        self._wealth_time: StepMemory[tuple[float, float]] = StepMemory(_no_wealth_at_0)

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), ("time", 7), ("mid", 9), ("spread", 6), ("inventory", 9),
                ("cash", 9), ("wealth", 8), ("reward", 9)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        wealth, time = float(env.wealth), float(env.timestamp)
        last = self._wealth_time.remember(env, step, (wealth, time), new_episode=new_episode)
        q = int(env.inventory)
        reward = "-"  # at the session start, and when the previous step was not rendered
        if last is not None:
            previous, before = last
            reward = step_reward(env, wealth - previous, q, time - before, step >= env.n_steps)
        spread = env.book.spread()
        return [
            str(step), f"{time:g}", format_price(float(env.mid)),
            "-" if spread is None else str(int(spread)), f"{q:+d}" if q else "0",
            f"{float(env.cash):g}", f"{wealth:+g}", reward,
        ]  # fmt: skip
