"""General charts: LineChart (lines, steps, dashes, bars over time), AreaChart, BarChart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.finance.rendering._format import format_number, format_pct
from sekai.finance.rendering._paint import (
    ColorSpec,
    dashed,
    fill_between,
    mix,
    resolve_color,
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
    check_weight,
    read,
    value_range,
)
from sekai.rendering import Canvas

__all__ = ["AreaChart", "BarChart", "LineChart", "Series"]

_STYLES = ("line", "step", "dashed", "bars")
_KINDS = ("number", "pct")


def _check_kind(kind: str) -> str:
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
        self.color = color
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
        steps, values = self.track.visible(lo)
        return np.asarray(steps, dtype=np.float64), np.asarray(values, dtype=np.float64)


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
    finite = np.isfinite(ys)
    # Break the line at missing values: draw each run of finite points on its own.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], finite.view(np.int8), [0]])))
    for start, stop in zip(edges[::2], edges[1::2]):
        pts = np.column_stack([xs[start:stop], ys[start:stop]])
        if series.style == "dashed":
            dashed(canvas, pts, color, width=width, dash=6 * ctx.unit, gap=4 * ctx.unit)
        else:
            canvas.polyline(pts, color, width=width)


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
            raise ValueError(f"primary must index one of the {len(self.series)} series, got {primary!r}.")
        self.primary = primary
        self.title = title
        self.kind = _check_kind(kind)
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
            canvas.line((axes.left, y), (axes.right, y), theme.muted, width=u, alpha=0.6)
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
    canvas.polygon([(axes.right - 2 * u, y), (x0, y - h / 2 - 2 * u), (x0, y + h / 2 + 2 * u)], color)
    canvas.rect(x0, y - h / 2 - 2 * u, x0 + w + 5 * u, y + h / 2 + 2 * u, color)
    text(canvas, x0 + 3 * u, y, label, ctx.theme.background, size=ctx.text, anchor="lm")


class AreaChart(Chart):
    """A stacked area over time of the vector a source gives each step (e.g. portfolio weights).

    Positive parts stack upwards from 0 and negative parts downwards, in source order.

    Args:
        source: a vector per step (an env attribute name or a callable of the env).
        labels: legend text per component (None: no legend).
        colors: colour per component (default: the theme's palette in order).
        title: drawn at the top left.
        kind: y labels as ``"pct"`` (default) or ``"number"``.
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        source: Source,
        *,
        labels: Sequence[str] | None = None,
        colors: Sequence[ColorSpec] | None = None,
        title: str = "",
        kind: str = "pct",
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        check_source("source", source)
        self.source = source
        self.labels = None if labels is None else [str(x) for x in labels]
        self.colors = None if colors is None else list(colors)
        self.title = title
        self.kind = _check_kind(kind)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self.track: Track[np.ndarray] = Track()

    def clear(self) -> None:
        self.track.clear()

    def observe(self, env: Any, step: int) -> None:
        self.track.put(step, np.asarray(read(self.source, env), dtype=np.float64).ravel())

    def trim(self, first: int) -> None:
        self.track.trim(first)

    def _color(self, ctx: DrawContext, i: int) -> Any:
        spec = self.colors[i] if self.colors is not None and i < len(self.colors) else i
        return resolve_color(ctx.theme, spec)

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        steps, rows = self.track.visible(ctx.x_lo)
        values = np.nan_to_num(np.array(rows, dtype=np.float64)) if rows else np.zeros((0, 1))
        pos, neg = np.clip(values, 0, None), np.clip(values, None, 0)
        top, bottom = np.cumsum(pos, axis=1), np.cumsum(neg, axis=1)
        low = float(bottom[:, -1].min()) if rows else 0.0
        high = float(top[:, -1].max()) if rows else 1.0
        legend = [(label, self._color(ctx, i), "box") for i, label in enumerate(self.labels or [])]
        axes = Axes(
            canvas, box, ctx, title=self.title, y_range=(min(low, 0.0), max(high, 1e-9) * 1.04),
            kind=self.kind, legend=legend,
        )  # fmt: skip
        if len(steps) < 1:
            return
        xs = axes.x(np.asarray(steps, dtype=np.float64))
        if len(steps) == 1:  # one observation: show it as a thin slice rather than nothing
            xs = np.array([xs[0], xs[0] + max(2 * ctx.unit, 1.0)])
            pos, neg, top, bottom = (np.repeat(a, 2, axis=0) for a in (pos, neg, top, bottom))
        for i in range(values.shape[1]):
            color = self._color(ctx, i)
            if pos[:, i].any():
                fill_between(canvas, xs, axes.y(top[:, i] - pos[:, i]), axes.y(top[:, i]), color,
                             alpha=0.85, clip=axes.clip)  # fmt: skip
            if neg[:, i].any():
                fill_between(canvas, xs, axes.y(bottom[:, i] - neg[:, i]), axes.y(bottom[:, i]),
                             color, alpha=0.85, clip=axes.clip)  # fmt: skip


class BarChart(Chart):
    """Horizontal bars of the vector a source gives now (e.g. the current weights).

    Args:
        source: a vector (an env attribute name or a callable of the env).
        labels: a label per bar, or a source giving them (None entries are shown as "empty").
        colors: colour per bar (default: the theme's palette in order).
        title: drawn at the top left.
        kind: value labels as ``"pct"`` (default) or ``"number"``.
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        source: Source,
        *,
        labels: Sequence[str] | Source | None = None,
        colors: Sequence[ColorSpec] | None = None,
        title: str = "",
        kind: str = "pct",
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        check_source("source", source)
        self.source = source
        self.labels = labels
        self.colors = None if colors is None else list(colors)
        self.title = title
        self.kind = _check_kind(kind)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self.values: np.ndarray | None = None
        self.names: list[str] = []

    def clear(self) -> None:
        self.values = None

    def observe(self, env: Any, step: int) -> None:
        self.values = np.asarray(read(self.source, env), dtype=np.float64).ravel()
        labels = self.labels
        if labels is not None and (isinstance(labels, str) or callable(labels)):
            labels = read(labels, env)
        names = [] if labels is None else ["empty" if x is None else str(x) for x in labels]
        self.names = names

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u, size = ctx.theme, ctx.unit, ctx.text
        x0, y0, x1, y1 = box
        title_end = text(canvas, x0, y0, self.title, theme.foreground, size=size)[3]
        values = np.nan_to_num(self.values) if self.values is not None else np.zeros(0)
        n = values.size
        if n == 0:
            return
        top = title_end + 6 * u
        row = (y1 - top) / n
        bar_h = min(row * 0.7, 3 * ctx.line)
        names = [self.names[i] if i < len(self.names) else str(i) for i in range(n)]
        label_w = min(max(Canvas.text_size(s, size)[0] for s in names), (x1 - x0) * 0.35)
        value_w = Canvas.text_size("−100.0%", size)[0]
        left = x0 + label_w + 6 * u
        right = x1 - value_w - 6 * u
        low, high = min(0.0, float(values.min())), max(0.0, float(values.max()), 1e-12)
        scale = (right - left) / (high - low)
        zero = left - low * scale
        for i, value in enumerate(values):
            cy = top + row * (i + 0.5)
            spec = self.colors[i] if self.colors is not None and i < len(self.colors) else i
            color = resolve_color(theme, spec)
            text(canvas, x0 + label_w, cy, names[i], theme.foreground, size=size, anchor="rm",
                 max_width=label_w)  # fmt: skip
            end = zero + value * scale
            canvas.rect(min(zero, end), cy - bar_h / 2, max(zero, end), cy + bar_h / 2, color)
            label = format_value(float(value), self.kind)
            text(canvas, max(zero, end) + 4 * u, cy, label, theme.muted, size=size, anchor="lm")
        canvas.line((zero, top), (zero, y1), theme.muted, width=u)
