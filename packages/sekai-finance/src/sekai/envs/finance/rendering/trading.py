"""TradingRenderer and TradingTextRenderer: Trading-v0 as a dashboard and as text lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sekai.envs.finance.rendering._base import (
    FinanceRenderer,
    GrowthTextRenderer,
    change,
    describe_costs,
    describe_market,
    format_price,
    format_time,
)
from sekai.envs.finance.trading import TradingEnv
from sekai.finance.rendering import Column, LineChart, PriceChart, Series, Stat
from sekai.finance.rendering._format import format_number

__all__ = ["TradingRenderer", "TradingTextRenderer", "held_position"]


def held_position(env: TradingEnv) -> float:
    """The target position held over the last step (before it drifted with the price).

    The env exposes the drifted position ``p = w (1 + r) / (1 + w r)``; the target is
    ``w = p / (1 + r - p r)``, snapped to the nearest allowed position.
    """
    position = float(env.position)
    if env.elapsed_steps == 0:
        return position
    prices = env.price_history
    r = prices[-1] / prices[-2] - 1.0
    denominator = 1.0 + r - position * r
    target = position / denominator if denominator != 0 else position
    nearest = min(env.positions, key=lambda w: abs(w - target))
    return nearest if abs(nearest - target) <= 1e-6 * max(1.0, abs(target)) else target


def _context(env: TradingEnv) -> Any:
    return env.price_history[: env.lookback + 1]


def _buy_and_hold(env: TradingEnv) -> float:
    return float(env.price / env.price_history[env.lookback])


def position_label(position: float) -> str:
    """``Long 1.00``, ``Short 0.50`` or ``Flat``."""
    if abs(position) < 1e-9:
        return "Flat"
    return f"{'Long' if position > 0 else 'Short'} {abs(position):.2f}"


class TradingRenderer(FinanceRenderer):
    """Draws a ``TradingEnv`` (wrapped or not) as a ``(height, width, 3)`` uint8 dashboard.

    Header: equity (with its change), position, price. Charts: the price, with the lookback
    history before the episode in a muted tone, the position held shaded behind it (long in the
    theme's ``up`` colour, short in ``down``, deeper for larger positions) and each trade marked
    as a triangle where it was decided; below, equity against buy-and-hold of the asset (both
    rebased to 1) with the drawdown shaded.

    Call ``render(env)`` after every reset and step (``RecordFrames`` does): the renderer
    accumulates the episode itself.

    Args:
        width: frame width in pixels (an int >= 64).
        height: frame height in pixels (an int >= 64).
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
        window: show only the latest ``window`` steps (None: the whole episode).
    """

    env_type = TradingEnv
    env_title = "Trading-v0"

    def _build(self) -> Column:
        return Column(
            PriceChart(
                "price", position=held_position, context=_context, title="Price", height=1.5
            ),
            LineChart(
                [
                    Series(_buy_and_hold, label="buy & hold", color="muted", width=1.2),
                    Series("equity", label="equity", color="accent", width=1.8),
                ],
                title="Equity vs buy & hold",
                baseline=1.0,
                drawdown=True,
                tag=True,
                primary=1,
            ),
        )

    def horizon(self, env: Any) -> int | None:
        return int(env.episode_length)

    def subtitle(self, env: Any) -> str:
        builtin = f"Simulated GBM, drift {env.mu:.3g}, volatility {env.sigma:.3g}"
        return describe_market(env, builtin=builtin) + describe_costs(env)

    def stats(self, env: Any) -> Sequence[Stat]:
        equity = float(env.equity)
        detail, tone = change(equity)
        stats = [
            Stat("Equity", f"{equity:.4f}", detail, tone),
            Stat("Position", position_label(float(env.position))),
            Stat("Price", format_price(float(env.price))),
        ]
        if env.data is not None and env.data.is_datetime:
            stats.append(Stat("Date", format_time(env.timestamp)))
        return stats


class TradingTextRenderer(GrowthTextRenderer):
    """Describes a ``TradingEnv`` as one text line per call: step, time, price, position,
    equity and the step's reward.

    The reward column is the log equity growth, which is the env's reward with the default
    ``LogReturn()``; with another reward function the column is headed ``log ret`` instead.
    """

    env_type = TradingEnv
    env_title = "Trading-v0"

    def columns(self, env: Any) -> Sequence[tuple[str, int]]:
        return [("step", 5), self._time_column(env), ("price", 10), ("position", 11),
                ("equity", 8), *self._growth_columns(env)]  # fmt: skip

    def row(self, env: Any, step: int, new_episode: bool) -> Sequence[str]:
        equity = float(env.equity)
        return [str(step), format_time(env.timestamp), format_number(float(env.price), 6),
                position_label(float(env.position)), f"{equity:.4f}",
                *self._growth(env, equity, step, new_episode)]  # fmt: skip
