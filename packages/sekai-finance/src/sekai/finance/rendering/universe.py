"""UniverseChart: weight per slot over time, greyed where untradable, labelled with its asset."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.finance.rendering._format import format_pct
from sekai.finance.rendering._paint import ColorSpec, check_color, mix, resolve_color, text, vline
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
    read_labels,
)
from sekai.rendering import Canvas

__all__ = ["UniverseChart"]


class UniverseChart(Chart):
    """One lane per slot of a changing universe: the weight held over time as colour intensity.

    The value a source gives after a step describes that step, drawn over ``(k - 1, k]``.

    Args:
        weights: the weight per slot ``(S,)``.
        available: whether each slot is tradable ``(S,)``; untradable time is greyed.
        labels: the asset in each slot ``(S,)`` (None for an empty slot); a lane is labelled with
            its current asset, and a change of asset is marked where it happens.
        color: colour of long weights (theme name, palette index or ``(r, g, b)``).
        negative_color: colour of short weights.
        title: drawn at the top left.
        width: layout weight within a row.
        height: layout weight within a column.
    """

    def __init__(
        self,
        weights: Source,
        *,
        available: Source | None = None,
        labels: Source | None = None,
        color: ColorSpec = "accent",
        negative_color: ColorSpec = "down",
        title: str = "Universe",
        width: float = 1.0,
        height: float = 1.0,
    ) -> None:
        check_source("weights", weights)
        check_source("available", available, optional=True)
        check_source("labels", labels, optional=True)
        self.weights, self.available, self.labels = weights, available, labels
        self.color = check_color("UniverseChart color", color)
        self.negative_color = check_color("UniverseChart negative_color", negative_color)
        self.title = check_title(title)
        self.width = check_weight("width", width)
        self.height = check_weight("height", height)
        self._weights: Track[np.ndarray] = Track()
        self._available: Track[np.ndarray] = Track()
        self._labels: Track[list[str | None]] = Track()

    def clear(self) -> None:
        for track in (self._weights, self._available, self._labels):
            track.clear()

    def observe(self, env: Any, step: int) -> None:
        weights = np.asarray(read(self.weights, env), dtype=np.float64).ravel()
        self._weights.put(step, weights)
        if self.available is not None:
            self._available.put(step, np.asarray(read(self.available, env), dtype=bool).ravel())
        if self.labels is not None:
            self._labels.put(step, read_labels("UniverseChart", "labels", self.labels, env))

    def trim(self, first: int) -> None:
        for track in (self._weights, self._available, self._labels):
            track.trim(first)

    def draw(self, canvas: Canvas, box: Box, ctx: DrawContext) -> None:
        theme, u, size = ctx.theme, ctx.unit, ctx.text
        steps, rows = self._weights.visible(ctx.x_lo)
        n_slots = rows[-1].size if rows else 0
        weights = np.array(rows, dtype=np.float64).reshape(len(rows), n_slots)
        # A NaN or infinite weight is unknown: its lane is left blank over that step.
        weights[~np.isfinite(weights)] = 0.0
        scale = float(np.abs(weights).max()) if weights.size else 0.0
        color = resolve_color(theme, self.color)
        negative = resolve_color(theme, self.negative_color)
        legend: list[tuple[str, Any, str]] = [(f"max {format_pct(scale, 1)}", color, "box")]
        if (weights < 0).any():
            legend.append(("short", negative, "box"))
        if self.available is not None:
            legend.append(("untradable", theme.grid, "box"))
        current = self._labels.values[-1] if len(self._labels) else []
        names = [(current[i] if i < len(current) else None) or "" for i in range(n_slots)]
        label_w: float = max((Canvas.text_size(s, size)[0] for s in names), default=0)
        label_w = min(label_w, (box[2] - box[0]) * 0.3)
        axes = Axes(canvas, (box[0] + label_w + 6 * u, *box[1:]), ctx, title=self.title,
                    y_range=(0.0, 1.0), legend=legend, y_labels=False,
                    title_left=box[0])  # fmt: skip
        if n_slots == 0:
            return
        lane = (axes.bottom - axes.top) / n_slots
        gap = 1.0 if lane >= 4 else 0.0
        # Column by column: which recorded step covers each pixel column, as ``(k - 1, k]``.
        x0, x1 = math.ceil(axes.left), math.floor(axes.right)
        cols = np.arange(x0, x1) + 0.5
        t = axes.x_lo + (cols - axes.left) / (axes.right - axes.left) * (axes.x_hi - axes.x_lo)
        index = np.searchsorted(np.asarray(steps), np.ceil(t - 1e-9), side="left")
        known = (index < len(steps)) & (
            np.asarray(steps)[np.minimum(index, len(steps) - 1)] == np.ceil(t - 1e-9)
        )
        index = np.minimum(index, len(steps) - 1)
        a_steps, a_rows = self._available.visible(ctx.x_lo)
        avail_by_step = dict(zip(a_steps, a_rows))
        for slot in range(n_slots):
            y0 = axes.top + slot * lane
            y1 = y0 + lane - gap
            r0, r1 = round(y0), max(round(y1), round(y0) + 1)
            values = weights[index, slot]
            depth = np.where(values != 0, 0.12 + 0.88 * np.abs(values) / max(scale, 1e-12), 0.0)
            ink = np.where((values < 0)[:, None], np.asarray(negative), np.asarray(color))
            band = (
                np.asarray(theme.background) + (ink - np.asarray(theme.background)) * depth[:, None]
            )
            block = np.repeat(band[None], r1 - r0, axis=0)
            if avail_by_step:
                tradable = np.array(
                    [avail_by_step.get(steps[i], np.ones(n_slots, bool))[slot] for i in index]
                )
                # Untradable time is hatched, so it never looks like an empty tradable slot.
                hatch = (np.arange(r0, r1)[:, None] + np.arange(x0, x1)[None, :]) % 6 < 2
                closed = ~tradable[None, :] & np.ones((r1 - r0, 1), bool)
                block[closed] = theme.grid
                block[closed & hatch] = mix(theme.grid, theme.muted, 0.45)
            block[:, ~known] = theme.background
            canvas.pixels[r0:r1, x0:x1] = np.clip(block + 0.5, 0, 255).astype(np.uint8)
            if names[slot]:
                text(canvas, axes.left - 4 * u, (y0 + y1) / 2, names[slot], theme.foreground,
                     size=size, anchor="rm", max_width=label_w)  # fmt: skip
        self._owner_changes(canvas, axes, ctx, lane, gap)

    def _owner_changes(
        self, canvas: Canvas, axes: Axes, ctx: DrawContext, lane: float, gap: float
    ) -> None:
        """Mark where a slot changed hands, naming the newcomer when the lane is tall enough."""
        steps, labels = self._labels.visible(ctx.x_lo)
        theme, u = ctx.theme, ctx.unit
        for prev, step, now in zip(labels, steps[1:], labels[1:]):
            for slot, (before, after) in enumerate(zip(prev, now)):
                if before == after or slot * lane >= axes.bottom - axes.top:
                    continue
                x = float(axes.x(step - 1))
                y0 = axes.top + slot * lane
                vline(canvas, x, y0, y0 + lane - gap, theme.foreground, width=1.5 * u)
                if after and lane >= ctx.line + 2:
                    color = mix(theme.foreground, theme.background, 0.1)
                    text(canvas, x + 3 * u, y0 + (lane - gap) / 2, after, color, size=ctx.text,
                         anchor="lm", max_width=axes.right - x - 4 * u)  # fmt: skip
