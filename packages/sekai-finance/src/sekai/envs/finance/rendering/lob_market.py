"""LimitOrderBookMarketRenderer and its text renderer: the multi-trader order-book market."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from sekai.envs.finance._lob_session import session_steps
from sekai.envs.finance.lob_market import LimitOrderBookMarket
from sekai.envs.finance.rendering._base import (
    BookRenderer,
    FinanceTextRenderer,
    checked_env,
    episode_of,
    format_price,
)
from sekai.envs.finance.rendering.lob import best_quotes, flow_subtitle
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
from sekai.finance.rendering._paint import distinct_colors
from sekai.rendering import require_reset

__all__ = ["LimitOrderBookMarketRenderer", "LimitOrderBookMarketTextRenderer"]


def _checked(renderer: object, env: Any) -> LimitOrderBookMarket:
    base: LimitOrderBookMarket = checked_env(renderer, env, LimitOrderBookMarket)
    # Its clock reads 0 before the first reset; the book is only seeded by a reset.
    require_reset(len(base.book) > 0)
    return base


class _DecisionClock:
    """Numbers the market's decision times 0, 1, 2, ... within a session (the dashboard's x)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._episode: int | None = None

    def step(self, env: LimitOrderBookMarket) -> int:
        now, episode = float(env.timestamp), episode_of(env)
        if now == 0.0 or (self.times and now < self.times[-1]) or episode != self._episode:
            self.times, self._episode = [now], episode
        elif not self.times or now > self.times[-1]:
            self.times.append(now)
        return len(self.times) - 1


class LimitOrderBookMarketRenderer(BookRenderer):
    """Draws a ``LimitOrderBookMarket`` as a ``(height, width, 3)`` uint8 dashboard.

    Header: the number of traders, the market's spread (ticks) and the session left. Charts:
    the mid price with the best bid/ask band; one inventory line and one wealth line per trader;
    the depth ladder with each trader's resting orders highlighted in its colour. The time axis
    counts the market's decision times (one per ``step()``).

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` decisions (None: the whole session).
        levels: price levels per side in the depth ladder.
    """

    env_type = LimitOrderBookMarket
    env_title = "LimitOrderBookMarket"

    def _build(self) -> Callable[[LimitOrderBookMarket], Row]:
        self._clock = _DecisionClock()
        return self._charts

    def _charts(self, env: LimitOrderBookMarket) -> Row:
        agents = list(env.possible_agents)
        colors: list[Any] = ["accent"] if len(agents) == 1 else list(range(len(agents)))
        pairs = list(zip(agents, colors))
        inventory = [
            Series(partial(_inventory_of, a), label=a, color=c, style="step") for a, c in pairs
        ]
        wealth = [Series(partial(_wealth_of, a), label=None, color=c) for a, c in pairs]
        owners = dict(enumerate(agents))
        title = "Inventory"
        if len(agents) > distinct_colors(self.theme):  # said where the colours are read
            title = "Inventory (colours repeat)"
        return Row(
            Column(
                PriceChart("mid" if hasattr(env, "mid") else _mid, spread=best_quotes,
                           title="Mid price (ticks)", height=1.5),
                Row(
                    LineChart(inventory, title=title, baseline=0.0),
                    LineChart(wealth, title="Wealth (ticks)", baseline=0.0),
                ),
                width=1.9,
            ),
            OrderBookChart("book", owners=owners, levels=self.levels),
        )  # fmt: skip

    def target(self, env: Any) -> Any:
        return _checked(self, env)

    def step_of(self, env: Any) -> int:
        return self._clock.step(env)

    def horizon(self, env: Any) -> int | None:
        return decision_count(env)

    def subtitle(self, env: Any) -> str:
        return flow_subtitle(env)

    def stats(self, env: Any) -> Sequence[Stat]:
        spread = env.book.spread()
        left = float(env.time_remaining) / env.params.session_length
        return [
            Stat("Traders", str(len(env.possible_agents))),
            Stat("Spread", "-" if spread is None else f"{int(spread)}"),
            Stat("Session left", format_pct(min(max(left, 0.0), 1.0), 0)),
        ]


def decision_count(env: LimitOrderBookMarket) -> int:
    """How many decision times a session has: exact without jitter, else about that many."""
    length = float(env.params.session_length)
    intervals = [float(d) for d in env.decision_intervals]
    if env.jitter > 0 or sum(length / d for d in intervals) > 100_000:
        return max(1, round(sum(length / d for d in intervals)))
    times = {round(k * d, 9) for d in intervals for k in range(session_steps(length, d))}
    return max(1, len(times))


def _inventory_of(agent: str, env: LimitOrderBookMarket) -> float:
    return float(env.inventory(agent))


def _wealth_of(agent: str, env: LimitOrderBookMarket) -> float:
    return float(env.wealth(agent))


def _mid(env: LimitOrderBookMarket) -> float:
    mid = env.book.mid()
    return math.nan if mid is None else float(mid)


class LimitOrderBookMarketTextRenderer(FinanceTextRenderer):
    """Describes a ``LimitOrderBookMarket`` as one text line per call: decision, time, mid,
    spread, who acts next, and each trader's inventory and wealth."""

    env_type = LimitOrderBookMarket
    env_title = "LimitOrderBookMarket"

    def __init__(self) -> None:
        super().__init__()
        self._clock = _DecisionClock()

    def _target(self, env: Any) -> Any:
        return _checked(self, env)

    def _step_of(self, base: Any) -> int:
        return self._clock.step(base)

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        columns = [("step", 5), ("time", 7), ("mid", 9), ("spread", 6), ("acting", 12)]
        for agent in env.possible_agents:
            columns.append((f"{agent} q/wealth", max(len(agent) + 9, 14)))
        return columns

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        spread = env.book.spread()
        acting = ",".join(a.rsplit("_", 1)[-1] for a in env.acting) or "-"
        cells = [str(step), f"{float(env.timestamp):g}", format_price(_mid(env)),
                 "-" if spread is None else str(int(spread)), acting]  # fmt: skip
        for agent in env.possible_agents:
            q = int(env.inventory(agent))
            cells.append(
                f"{q:+d}/{float(env.wealth(agent)):+g}" if q else f"0/{env.wealth(agent):+g}"
            )
        return cells
