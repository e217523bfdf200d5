"""OptimalExecutionRenderer and its text renderer: OptimalExecution-v0 as a dashboard and text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.rendering._base import (
    FinanceRenderer,
    FinanceTextRenderer,
    StepMemory,
    format_price,
)
from sekai.finance.rendering import Column, LineChart, PriceChart, Row, Series, Stat
from sekai.finance.rendering._format import format_number, format_pct

__all__ = ["ExecutionTracker", "OptimalExecutionRenderer", "OptimalExecutionTextRenderer"]


def _whole_position(env: OptimalExecutionEnv) -> tuple[float, float]:
    """Inventory and shortfall at the episode start: the whole position, no shortfall."""
    return float(env.X0), 0.0


class ExecutionTracker:
    """Recovers each step's trade from the env's public state, step by step.

    The shares sold in the step just ended are the fall of ``inventory``, and since the
    shortfall grows by ``n (s0 - P)`` the execution price is ``P = s0 - Δshortfall / n``.
    """

    def __init__(self) -> None:
        self._seen: StepMemory[tuple[float, float]] = StepMemory(_whole_position)

    def _before(self, env: OptimalExecutionEnv) -> tuple[float, float] | None:
        """Inventory and shortfall at the step before the env's (None when not seen)."""
        state = (float(env.inventory), float(env.shortfall))
        return self._seen.remember(env, int(env.elapsed_steps), state)

    def sold(self, env: OptimalExecutionEnv) -> float:
        """Shares sold in the step just ended (NaN when the previous step was not seen)."""
        before = self._before(env)
        if int(env.elapsed_steps) == 0:
            return 0.0
        return math.nan if before is None else before[0] - float(env.inventory)

    def price(self, env: OptimalExecutionEnv) -> float | None:
        """The execution price of the step just ended (None when nothing was sold)."""
        before = self._before(env)
        if before is None:
            return None
        sold = before[0] - float(env.inventory)
        if not sold > 0:
            return None
        return float(env.s0) - (float(env.shortfall) - before[1]) / sold


def _plan(env: OptimalExecutionEnv) -> np.ndarray:
    """The plan's inventory at every step."""
    return env.almgren_chriss_trajectory()


def _plan_trades(env: OptimalExecutionEnv) -> np.ndarray:
    """The plan's shares per step, laid out for a step line over ``(k, k + 1]``."""
    trades = -np.diff(env.almgren_chriss_trajectory())
    return np.append(trades, trades[-1])


class OptimalExecutionRenderer(FinanceRenderer):
    """Draws an ``OptimalExecutionEnv`` (wrapped or not) as a ``(height, width, 3)`` dashboard.

    Header: the implementation shortfall in basis points of the arrival notional (lower is
    better), the fraction sold and the mid. Charts: the inventory left against the
    Almgren–Chriss plan (dashed); the shares sold per step (bars, the plan's as a dashed step
    line); the mid price with the execution prices (down-triangles) against the arrival price.

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole horizon).
    """

    env_type = OptimalExecutionEnv
    env_title = "OptimalExecution-v0"

    def _build(self) -> Column:
        self._tracker = ExecutionTracker()
        plan = Series(
            _plan, label="Almgren-Chriss plan",
            color="muted", style="dashed", static=True,
        )  # fmt: skip
        return Column(
            Row(
                LineChart([plan, Series("inventory", label="inventory", color="accent", width=2)],
                          title="Inventory", primary=1, baseline=0.0),
                PriceChart("mid", sells=self._tracker.price, reference="s0",
                           reference_label="arrival price", title="Mid price"),
            ),
            LineChart(
                [Series(self._tracker.sold, label="sold", color="accent", style="bars"),
                 Series(_plan_trades, label="plan", color="muted", style="dashed", static=True)],
                title="Shares sold per step", height=0.8,
            ),
        )  # fmt: skip

    def horizon(self, env: Any) -> int | None:
        return int(env.n_steps)

    def subtitle(self, env: Any) -> str:
        return (
            f"Almgren–Chriss liquidation: sell {format_number(env.X0, 3)} shares from "
            f"{env.s0:g} in {env.n_steps} periods, sigma {env.sigma:g}, eta {env.eta:g}, "
            f"lambda {env.risk_aversion:g}"
        )

    def stats(self, env: Any) -> Sequence[Stat]:
        bps = 1e4 * float(env.shortfall) / (float(env.X0) * float(env.s0))
        sold = 1.0 - float(env.inventory) / float(env.X0)
        return [
            Stat("Shortfall", f"{bps:.1f} bp", "lower is better"),
            Stat("Sold", format_pct(sold, 1)),
            Stat("Mid", format_price(float(env.mid))),
        ]


class OptimalExecutionTextRenderer(FinanceTextRenderer):
    """Describes an ``OptimalExecutionEnv`` as one text line per call: step, time, mid, shares
    sold and their price, inventory, shortfall and the step's reward (recomputed exactly from
    the state)."""

    env_type = OptimalExecutionEnv
    env_title = "OptimalExecution-v0"

    def __init__(self) -> None:
        super().__init__()
        self._tracker = ExecutionTracker()

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), ("time", 6), ("mid", 9), ("sold", 9), ("price", 9),
                ("inventory", 9), ("shortfall", 11), ("reward", 9)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        sold = self._tracker.sold(env)
        price = self._tracker.price(env)
        x = float(env.inventory)
        notional = float(env.X0) * float(env.s0)
        if step == 0 or math.isnan(sold):
            reward = "-"
        else:
            gain = sold * ((price if price is not None else float(env.s0)) - float(env.s0))
            penalty = env.risk_aversion * env.sigma**2 * env.tau * x * x
            reward = f"{1e4 * (gain - penalty) / notional:+.3f}"
        bps = 1e4 * float(env.shortfall) / notional
        return [
            str(step), f"{step * env.tau:g}", format_price(float(env.mid)),
            "-" if math.isnan(sold) else format_number(sold, 4),
            "-" if price is None else format_price(price), format_number(x, 4),
            f"{bps:.2f} bp", reward,
        ]  # fmt: skip
