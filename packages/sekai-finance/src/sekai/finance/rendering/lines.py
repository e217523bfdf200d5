"""LineChart and its Series: values over time as lines, steps, dashes or bars."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.finance.rendering._format import format_number, format_pct
from sekai.finance.rendering._paint import (
    ColorSpec,
    check_color,
    dashed,
    fill_between,
    finite_runs,
    hline,
    mix,
    resolve_color,
    series_line,
    text,
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
from sekai.rendering import Canvas

__all__ = ["LineChart", "Series", "check_kind", "format_value", "tag_width", "value_tag"]

_STYLES = ("line", "step", "dashed", "bars")
_KINDS = ("number", "pct")


def check_kind(kind: str) -> str:
    """Return ``kind`` if it is a known value kind ('number' or 'pct'), else raise ValueError."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be 'number' or 'pct', got {kind!r}.")
    return kind


def format_value(value: float, kind: str) -> str:
    """A value as a chart labels it: a percentage or a number with 4 significant digits."""
    return format_pct(value, 1) if kind == "pct" else format_number(value)


class Series:
    """One series of a ``LineChart``.

    Args:
        source: the value at each step (an env attribute name or a callable of the env); with
            ``static=True`` a whole array over steps ``0, 1, ...`` read once per episode (a plan).
        label: legend text (None: not in the legend).
        color: a theme colour name, a palette index or ``(r, g, b)``.
        style: ``"line"``, ``"step"`` (holds each value until the next step), ``"dashed"`` or
            ``"bars"`` (the value of step ``k`` as a bar over ``(k - 1, k]``).
        width: line width at the default frame size.
        static: whether ``source`` gives the whole series at once.
    """

    def __init__(
        self,
        source: Source,
        *,
        label: str | None = None,
        color: ColorSpec = "accent",
        style: str = "line",
        width: float = 1.5,
        static: bool = False,
    ) -> None:
        check_source("source", source)
        if style not in _STYLES:
            raise ValueError(f"style must be one of {', '.join(_STYLES)}, got {style!r}.")
        self.source = source
        self.label = label
        self.color = check_color("Series color", color)
        self.style = style
        self.width = check_weight("width", width)
        self.static = bool(static)
        self.track: Track[float] = Track()
        self.plan: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"Series({self.source!r}, label={self.label!r}, style={self.style!r})"

    def points(self, lo: float) -> tuple[np.ndarray, np.ndarray]:
        """Steps and values visible from step ``lo``."""
        if self.static:
            if self.plan is None:
                return np.empty(0), np.empty(0)
            steps = np.arange(len(self.plan), dtype=np.float64)
            keep = steps >= lo
            return steps[keep], self.plan[keep]
        seen, values = self.track.visible(lo)
        return np.asarray(seen, dtype=np.float64), np.asarray(values, dtype=np.float64)


def draw_series(canvas: Canvas, axes: Axes, series: Series, ctx: DrawContext) -> None:
    """Draw one series on ``axes`` in its style."""
    steps, values = series.points(axes.x_lo)
    if steps.size == 0:
        return
    color = resolve_color(ctx.theme, series.color)
    width = series.width * ctx.unit
    if series.style == "bars":
        bar = max((axes.right - axes.left) / (axes.x_hi - axes.x_lo) * 0.75, 1.0)
        zero = float(axes.y(0.0))
        for step, value in zip(steps, values):
            if math.isfinite(value) and value != 0:
                x = float(axes.x(step - 0.5))
                canvas.rect(x - bar / 2, zero, x + bar / 2, float(axes.y(value)), color)
        return
    if series.style == "step" and steps.size > 1:
        steps = np.repeat(steps, 2)[1:]
        values = np.repeat(values, 2)[:-1]
    xs, ys = axes.x(steps), axes.y(values)
    for run in finite_runs(ys):  # a missing value is a gap in the line
        pts = np.column_stack([xs[run], ys[run]])
        if series.style == "dashed":
            dashed(canvas, pts, color, width=width, dash=6 * ctx.unit, gap=4 * ctx.unit)
        else:
            series_line(canvas, pts[:, 0], pts[:, 1], color, width=width)


class LineChart(Chart):
    """Values over time: one or more ``Series`` on one y axis.

    Args:
        series: the series, drawn in order (the first on the bottom).
        title: drawn at the top left.
        kind: y labels as numbers (``"number"``) or percentages (``"pct"``).
        baseline: a value drawn as a thin horizontal line and kept in view (e.g. 0 or 1).
        drawdown: shade the primary series' fall from its running peak.
        tag: label the primary series' latest value at the right edge.
        primary: index of the main series (drawn last, on top of the others).
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        series: Sequence[Series],
        *,
        title: str = "",
        kind: str = "number",
        baseline: float | None = None,
        drawdown: bool = False,
        tag: bool = False,
        primary: int = 0,
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        self.series = list(series)
        if not self.series or not all(isinstance(s, Series) for s in self.series):
            raise TypeError("LineChart needs at least one Series.")
        if not isinstance(primary, int) or not 0 <= primary < len(self.series):
            raise ValueError(
                f"primary must index one of the {len(self.series)} series, got {primary!r}."
            )
        self.primary = primary
        self.title = check_title(title)
        self.kind = check_kind(kind)
        self.baseline = baseline
        self.drawdown = bool(drawdown)
        self.tag = bool(tag)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)

    def clear(self) -> None:
        for s in self.series:
            s.track.clear()
            s.plan = None

    def observe(self, env: Any, step: int) -> None:
        for s in self.series:
            if s.static:
                if s.plan is None:
                    s.plan = np.asarray(read(s.source, env), dtype=np.float64).ravel()
            else:
                value = read(s.source, env)
                s.track.put(step, math.nan if value is None else float(value))

    def trim(self, first: int) -> None:
        for s in self.series:
            s.track.trim(first)

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u = ctx.theme, ctx.unit
        visible = [s.points(ctx.x_lo) for s in self.series]
        values = [v for _, v in visible]
        include = [] if self.baseline is None else [self.baseline]
        if any(s.style == "bars" for s in self.series):
            include.append(0.0)
        low, high = value_range(np.concatenate(values) if values else [], include=include)
        legend = [
            (s.label, resolve_color(theme, s.color), "box" if s.style == "bars" else s.style)
            for s in self.series
            if s.label
        ]
        if self.drawdown:
            legend.append(("drawdown", mix(theme.background, theme.down, 0.3), "box"))
        first = visible[self.primary][1]
        last = next((float(v) for v in first[::-1] if math.isfinite(v)), None)
        tag_text = format_value(last, self.kind) if self.tag and last is not None else ""
        right = tag_width(tag_text, ctx) if tag_text else 0.0
        axes = Axes(
            canvas, box, ctx, title=self.title, y_range=(low, high), kind=self.kind,
            legend=[(label, c, st) for label, c, st in legend], right=right,
        )  # fmt: skip
        if self.baseline is not None:
            y = float(axes.y(self.baseline))
            hline(canvas, axes.left, axes.right, y, theme.muted, width=u, alpha=0.6)
        if self.drawdown and first.size > 1:
            steps = visible[self.primary][0]
            finite = np.isfinite(first)
            peak = np.maximum.accumulate(np.where(finite, first, -np.inf))
            peak = np.where(np.isfinite(peak), peak, first)
            fill_between(
                canvas, axes.x(steps), axes.y(peak), axes.y(first), theme.down, alpha=0.2,
                clip=axes.clip,
            )  # fmt: skip
        order = [s for i, s in enumerate(self.series) if i != self.primary]
        for s in [*order, self.series[self.primary]]:
            draw_series(canvas, axes, s, ctx)
        if tag_text and last is not None:
            color = resolve_color(theme, self.series[self.primary].color)
            value_tag(canvas, axes, float(axes.y(last)), tag_text, color, ctx)


def tag_width(label: str, ctx: DrawContext) -> float:
    """Room a value tag takes at the right of a plot (at least seven characters' worth)."""
    return max(Canvas.text_size(label, ctx.text)[0], 41 * ctx.text) + 9 * ctx.unit


def value_tag(
    canvas: Canvas, axes: Axes, y: float, label: str, color: Any, ctx: DrawContext
) -> None:
    """A filled label at the plot's right edge, pointing at ``y`` (the latest value)."""
    u = ctx.unit
    w, h = Canvas.text_size(label, ctx.text)
    x0 = axes.right + 2 * u
    y = min(max(y, axes.top + h / 2 + 2 * u), axes.bottom - h / 2 - 2 * u)
    canvas.polygon(
        [(axes.right - 2 * u, y), (x0, y - h / 2 - 2 * u), (x0, y + h / 2 + 2 * u)], color
    )
    canvas.rect(x0, y - h / 2 - 2 * u, x0 + w + 5 * u, y + h / 2 + 2 * u, color)
    text(canvas, x0 + 3 * u, y, label, ctx.theme.background, size=ctx.text, anchor="lm")
