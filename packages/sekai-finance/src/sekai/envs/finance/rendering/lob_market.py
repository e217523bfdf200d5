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
    StepMemory,
    format_price,
)
from sekai.envs.finance.rendering.lob import best_quotes, flow_subtitle, step_reward
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

__all__ = ["LimitOrderBookMarketRenderer", "LimitOrderBookMarketTextRenderer"]


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


_Wealths = tuple[tuple[float, ...], float]  # every trader's wealth, and the session time


def _flat_at_0(env: LimitOrderBookMarket) -> _Wealths:
    """Every trader's wealth and the time at the session start."""
    return (0.0,) * len(env.possible_agents), 0.0


def _numbers(agents: Sequence[str]) -> str:
    """``trader_0``, ``trader_3`` -> ``0,3`` (``-`` for none)."""
    return ",".join(a.rsplit("_", 1)[-1] for a in agents) or "-"


def _text_columns(agents: Sequence[str]) -> list[tuple[str, int]]:
    """The text renderer's columns for these traders: ``acting`` fits every trader's number and
    ``rewards`` one reward of up to ``+99.999`` per trader."""
    acting = ("acting", max(len(_numbers(agents)), 6))
    columns = [("step", 5), ("time", 7), ("mid", 9), ("spread", 6), acting]
    columns += [(f"{a} q/wealth", max(len(a) + 9, 14)) for a in agents]
    columns.append(("rewards", max(8 * len(agents) - 1, 7)))
    return columns


class LimitOrderBookMarketTextRenderer(FinanceTextRenderer):
    """Describes a ``LimitOrderBookMarket`` as one text line per call: decision, time, mid,
    spread, who acts next, each trader's inventory and wealth, and last every trader's reward
    of the step (comma-separated in trader order, recomputed exactly from the state as
    ``LimitOrderBookTextRenderer`` does; ``-`` at the session start and when the previous step
    was not rendered)."""

    env_type = LimitOrderBookMarket
    env_title = "LimitOrderBookMarket"

    def __init__(self) -> None:
        super().__init__()
        self._wealths: StepMemory[_Wealths] = StepMemory(_flat_at_0)
        self._layout: tuple[tuple[str, ...], list[tuple[str, int]]] | None = None

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        agents = tuple(env.possible_agents)
        if self._layout is None or self._layout[0] != agents:  # once per market drawn
            self._layout = (agents, _text_columns(agents))
        return self._layout[1]

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        spread = env.book.spread()
        time = float(env.timestamp)
        cells = [str(step), f"{time:g}", format_price(_mid(env)),
                 "-" if spread is None else str(int(spread)), _numbers(env.acting)]  # fmt: skip
        wealths, held = [], []
        for agent in env.possible_agents:
            q, wealth = int(env.inventory(agent)), float(env.wealth(agent))
            wealths.append(wealth)
            held.append(q)
            cells.append(f"{q:+d}/{wealth:+g}" if q else f"0/{wealth:+g}")
        now = (tuple(wealths), time)
        last = self._wealths.remember(env, step, now, new_episode=new_episode)
        if last is None:  # at the session start, and when the previous step was not rendered
            cells.append("-")
        else:
            previous, before = last
            ended = not env.agents
            cells.append(",".join(
                step_reward(env, w - p, q, time - before, ended)
                for w, p, q in zip(wealths, previous, held)
            ))  # fmt: skip
        return cells
