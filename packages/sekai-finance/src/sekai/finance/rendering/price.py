"""PriceChart: a price line with positions, quotes, spread band, trades and a reference level."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from sekai.finance._values import real_float, scalar
from sekai.finance.rendering._format import format_price
from sekai.finance.rendering._paint import (
    dashed,
    fill_between,
    finite_runs,
    mix,
    series_line,
    text,
    triangle,
    vline,
)
from sekai.finance.rendering.chart import (
    Axes,
    Box,
    Chart,
    DrawContext,
    Source,
    Track,
    check_source,
    check_title,
    check_weight,
    read,
    value_range,
)
from sekai.finance.rendering.lines import tag_width, value_tag
from sekai.rendering import Canvas

__all__ = ["PriceChart"]


def _prices(value: Any) -> list[float]:
    """A trade source's value as a list of prices (None, NaN, a number or several numbers)."""
    if value is None:
        return []
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        items = [float(p) for p in np.asarray(list(value), dtype=np.float64).ravel()]
    else:
        items = [float(value)]
    return [float(p) for p in items if math.isfinite(p)]


def _price_line(
    canvas: Canvas,
    axes: Axes,
    steps: list[int] | list[float],
    prices: list[float],
    color: Any,
    width: float,
    *,
    dots: bool,
) -> None:
    """Prices over steps as a line that breaks at NaN (a gap, as in ``LineChart``); with
    ``dots``, a price with no neighbour to join is drawn as a dot."""
    xs = axes.x(np.asarray(steps, dtype=np.float64))
    ys = axes.y(np.asarray(prices, dtype=np.float64))
    for run in finite_runs(ys):
        if run.stop - run.start > 1:
            series_line(canvas, xs[run], ys[run], color, width=width)
        elif dots:
            canvas.circle((float(xs[run.start]), float(ys[run.start])), width * 4 / 3, color)


def _pair(value: Any) -> tuple[float, float]:
    if value is None:
        return math.nan, math.nan
    low, high = (float(v) for v in value)
    return low, high


class PriceChart(Chart):
    """A price over time with what the agent did around it.

    Every source is an env attribute name or a callable of the env, read after each reset and
    step; values observed after a step describe that step (from the previous decision to now).

    Args:
        price: the price now.
        position: the position held over the step just ended (the one decided at the previous
            decision); shaded behind the price, long in the theme's ``up`` colour and short in
            ``down``, deeper for larger positions. A change of more than ``min_trade`` marks a
            trade at the decision that made it: an up-triangle for an increase, a down-triangle
            for a decrease.
        quotes: ``(bid, ask)`` quoted over the step just ended, drawn as short levels.
        spread: ``(best bid, best ask)`` of the market now, drawn as a band.
        buys: price(s) bought at during the step just ended (None or NaN: none).
        sells: price(s) sold at during the step just ended.
        context: prices before the episode (ending at its first price), read at the first
            observation of an episode and drawn in a muted tone left of step 0.
        reference: a level drawn as a dashed line (e.g. the arrival price).
        reference_label: the reference line's label.
        title: drawn at the top left.
        tag: label the latest price at the right edge.
        min_trade: the smallest position change marked as a trade.
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        price: Source,
        *,
        position: Source | None = None,
        quotes: Source | None = None,
        spread: Source | None = None,
        buys: Source | None = None,
        sells: Source | None = None,
        context: Source | None = None,
        reference: Source | None = None,
        reference_label: str | None = None,
        title: str = "Price",
        tag: bool = True,
        min_trade: float = 1e-6,
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        check_source("price", price)
        sources = {
            "position": position, "quotes": quotes, "spread": spread, "buys": buys,
            "sells": sells, "context": context, "reference": reference,
        }  # fmt: skip
        for name, source in sources.items():
            check_source(name, source, optional=True)
        trade = real_float(scalar(min_trade))  # any real number (np.float32, a Decimal)
        if trade is None or not trade >= 0:  # inf marks no trade
            raise ValueError(f"min_trade must be a number >= 0, got {min_trade!r}.")
        self.price, self.position, self.quotes, self.spread = price, position, quotes, spread
        self.buys, self.sells, self.context, self.reference = buys, sells, context, reference
        self.reference_label = reference_label
        self.title = check_title(title)
        self.tag = bool(tag)
        self.min_trade = trade
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self._prices: Track[float] = Track()
        self._positions: Track[float] = Track()
        self._quotes: Track[tuple[float, float]] = Track()
        self._spread: Track[tuple[float, float]] = Track()
        self._buys: Track[list[float]] = Track()
        self._sells: Track[list[float]] = Track()
        self._context: np.ndarray | None = None
        self._reference = math.nan

    def clear(self) -> None:
        for track in self._tracks():
            track.clear()
        self._context = None

    def _tracks(self) -> list[Track[Any]]:
        return [self._prices, self._positions, self._quotes, self._spread, self._buys, self._sells]

    def observe(self, env: Any, step: int) -> None:
        self._prices.put(step, float(read(self.price, env)))
        if self.position is not None:
            self._positions.put(step, float(read(self.position, env)))
        if self.quotes is not None:
            self._quotes.put(step, _pair(read(self.quotes, env)))
        if self.spread is not None:
            self._spread.put(step, _pair(read(self.spread, env)))
        if self.buys is not None:
            self._buys.put(step, _prices(read(self.buys, env)))
        if self.sells is not None:
            self._sells.put(step, _prices(read(self.sells, env)))
        if self.context is not None and self._context is None:
            self._context = np.asarray(read(self.context, env), dtype=np.float64).ravel()
        if self.reference is not None:
            self._reference = float(read(self.reference, env))

    def trim(self, first: int) -> None:
        for track in self._tracks():
            track.trim(first)

    def first_step(self) -> int:
        if self._context is None or self._context.size < 2:
            return 0
        return 1 - int(self._context.size)

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u = ctx.theme, ctx.unit
        lo = ctx.x_lo
        steps, prices = self._prices.visible(lo)
        ctx_steps, ctx_prices = self._visible_context(lo)
        q_steps, quotes = self._quotes.visible(lo)
        s_steps, spread = self._spread.visible(lo)
        buys, sells = self._buys.visible(lo - 1), self._sells.visible(lo - 1)
        trades = [p for _, values in (buys, sells) for v in values for p in v]
        include = [self._reference] if math.isfinite(self._reference) else []
        low, high = value_range(
            [*prices, *ctx_prices, *np.ravel(quotes), *np.ravel(spread), *trades], include=include
        )
        last = prices[-1] if prices and math.isfinite(prices[-1]) else None  # NaN: a gap
        tag = format_price(last) if self.tag and last is not None else ""
        right = tag_width(tag, ctx) if tag else 0.0
        legend = self._legend(ctx)
        axes = Axes(canvas, box, ctx, title=self.title, y_range=(low, high), legend=legend,
                    right=right)  # fmt: skip
        trade_marks = self._shade_positions(canvas, axes, ctx)
        if s_steps:
            band = np.asarray(spread, dtype=np.float64)
            xs = axes.x(np.asarray(s_steps, float))
            for run in finite_runs(band.sum(axis=1)):  # a one-sided book leaves a gap
                fill_between(canvas, xs[run], axes.y(band[run, 0]), axes.y(band[run, 1]),
                             theme.accent, alpha=0.18, clip=axes.clip)  # fmt: skip
        if math.isfinite(self._reference):
            y = float(axes.y(self._reference))
            dashed(canvas, [(axes.left, y), (axes.right, y)], theme.muted, width=u,
                   dash=5 * u, gap=4 * u)  # fmt: skip

        if len(ctx_steps) > 1:
            _price_line(canvas, axes, ctx_steps, ctx_prices, theme.muted, 1.2 * u, dots=False)
            x0 = float(axes.x(0))
            vline(canvas, x0, axes.top, axes.bottom, theme.grid, width=u)
        if q_steps:
            self._draw_quotes(canvas, axes, q_steps, quotes, ctx)
        _price_line(canvas, axes, steps, prices, theme.foreground, 1.5 * u, dots=True)
        size = 8 * u
        for x, y, up in trade_marks:
            triangle(canvas, x, y, size, theme.up if up else theme.down, up=up,
                     outline=theme.background)  # fmt: skip
        for (t_steps, values), up in ((buys, True), (sells, False)):
            for step, levels in zip(t_steps, values):
                x = float(axes.x(step - 0.5))
                if x < axes.left:
                    continue
                for level in levels:
                    triangle(canvas, x, float(axes.y(level)), size, theme.up if up else theme.down,
                             up=up, outline=theme.background)  # fmt: skip
        if self.reference_label and math.isfinite(self._reference):
            # Written last, on a veil of background, so the price line never hides it.
            y = float(axes.y(self._reference))
            w, h = Canvas.text_size(self.reference_label, ctx.text)
            x0, y0 = axes.left + 3 * u, y - 3 * u - h
            canvas.rect(x0 - u, y0 - u, x0 + w + u, y0 + h + u, theme.background, alpha=0.8)
            text(canvas, x0, y0, self.reference_label, theme.muted, size=ctx.text)
        if tag and last is not None:
            value_tag(canvas, axes, float(axes.y(last)), tag, theme.foreground, ctx)

    @staticmethod
    def _draw_quotes(
        canvas: Canvas,
        axes: Axes,
        steps: list[int],
        quotes: list[tuple[float, float]],
        ctx: DrawContext,
    ) -> None:
        """Bid and ask as step lines: each step's quote held over the step it was live."""
        levels = np.asarray(quotes, dtype=np.float64)
        for column, color in ((0, ctx.theme.up), (1, ctx.theme.down)):
            xs: list[float] = []
            ys: list[float] = []
            last = steps[0] - 1
            for step, level in zip(steps, levels[:, column]):
                if not np.isfinite(level) or (xs and step - 1 != last):
                    if len(xs) > 1:
                        series_line(canvas, xs, ys, color, width=1.2 * ctx.unit, alpha=0.8)
                    xs, ys = [], []
                if np.isfinite(level):
                    y = float(axes.y(level))
                    xs += [max(float(axes.x(step - 1)), axes.left), float(axes.x(step))]
                    ys += [y, y]
                last = step
            if len(xs) > 1:
                series_line(canvas, xs, ys, color, width=1.2 * ctx.unit, alpha=0.8)

    def _visible_context(self, lo: float) -> tuple[list[float], list[float]]:
        if self._context is None or self._context.size < 2:
            return [], []
        steps = np.arange(1 - self._context.size, 1, dtype=np.float64)
        keep = steps >= lo
        return list(steps[keep]), list(self._context[keep])

    def _shade_positions(
        self, canvas: Canvas, axes: Axes, ctx: DrawContext
    ) -> list[tuple[float, float, bool]]:
        """Shade each step by the position held over it; return the trade marks to draw."""
        steps, positions = self._positions.visible(ctx.x_lo - 1)
        marks: list[tuple[float, float, bool]] = []
        if not steps:
            return marks
        theme = ctx.theme
        # A NaN position is unknown: nothing is shaded over its step and no trade is marked.
        scale = max([1.0, *(abs(p) for p in positions if math.isfinite(p))])
        held = dict(zip(steps, positions))
        price_at = dict(zip(self._prices.steps, self._prices.values))
        spans: list[tuple[int, int, float]] = []  # (first step, last step, position held)
        for step, value in zip(steps, positions):
            if step < 1:
                continue
            if spans and spans[-1][1] == step - 1 and spans[-1][2] == value:
                spans[-1] = (spans[-1][0], step, value)
            else:
                spans.append((step - 1, step, value))
            before = held.get(step - 1)
            decided = step - 1
            if (
                before is not None
                and abs(value - before) > self.min_trade
                and decided >= ctx.x_lo
                and math.isfinite(price_at.get(decided, math.nan))
            ):
                marks.append(
                    (float(axes.x(decided)), float(axes.y(price_at[decided])), value > before)
                )
        for start, stop, value in spans:
            if value == 0 or stop <= start or not math.isfinite(value):
                continue
            depth = 0.08 + 0.14 * min(abs(value) / scale, 1.0)
            color = theme.up if value > 0 else theme.down
            x0 = max(float(axes.x(start)), axes.left)
            canvas.rect(x0, axes.top, float(axes.x(stop)), axes.bottom, color, alpha=depth)
        return marks

    def _legend(self, ctx: DrawContext) -> list[tuple[str, Any, str]]:
        theme = ctx.theme
        legend: list[tuple[str, Any, str]] = []
        if self.position is not None:
            legend += [("long", mix(theme.background, theme.up, 0.3), "box")]
            legend += [("short", mix(theme.background, theme.down, 0.3), "box")]
        if self.quotes is not None:
            legend += [("bid", theme.up, "line"), ("ask", theme.down, "line")]
        if self.spread is not None:
            legend.append(("spread", mix(theme.background, theme.accent, 0.4), "box"))
        if self.position is not None or self.buys is not None:
            legend.append(("buy", theme.up, "up"))
        if self.position is not None or self.sells is not None:
            legend.append(("sell", theme.down, "down"))
        return legend
