"""AreaChart and BarChart: how a whole splits into parts, over time and now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.finance.rendering._paint import (
    ColorSpec,
    check_colors,
    fill_between,
    resolve_color,
    text,
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
    describe_source,
    read,
    read_labels,
)
from sekai.finance.rendering.lines import check_kind, format_value
from sekai.rendering import Canvas

__all__ = ["AreaChart", "BarChart"]


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
        self.colors = check_colors(f"{type(self).__name__} colors", colors)
        self.title = check_title(title)
        self.kind = check_kind(kind)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self.track: Track[np.ndarray] = Track()

    def clear(self) -> None:
        self.track.clear()

    def observe(self, env: Any, step: int) -> None:
        values = np.asarray(read(self.source, env), dtype=np.float64).ravel()
        if values.size == 0:
            raise ValueError(
                f"AreaChart source {describe_source(self.source)} gave an empty vector; it "
                "needs one value per part."
            )
        self.track.put(step, values)

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
        self.colors = check_colors(f"{type(self).__name__} colors", colors)
        self.title = check_title(title)
        self.kind = check_kind(kind)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self.values: np.ndarray | None = None
        self.names: list[str] = []

    def clear(self) -> None:
        self.values = None

    def observe(self, env: Any, step: int) -> None:
        self.values = np.asarray(read(self.source, env), dtype=np.float64).ravel()
        labels = self.labels
        given: Sequence[str | None] = []
        if isinstance(labels, str) or callable(labels):
            given = read_labels("BarChart", "labels", labels, env)
        elif labels is not None:
            given = labels
        self.names = ["empty" if x is None else str(x) for x in given]

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
        vline(canvas, zero, top, y1, theme.muted, width=u)
