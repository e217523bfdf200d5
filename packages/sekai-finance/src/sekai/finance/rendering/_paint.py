"""Drawing helpers the charts share: filled column spans, dashed lines, markers, fitted text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from sekai.finance.rendering._format import plain
from sekai.rendering import Canvas, Color, Theme

__all__ = [
    "ColorSpec",
    "check_color",
    "check_colors",
    "dashed",
    "distinct_colors",
    "fill_between",
    "finite_runs",
    "fit_text",
    "hline",
    "mix",
    "palette_color",
    "resolve_color",
    "series_line",
    "text",
    "triangle",
    "vline",
]

FloatArray = npt.NDArray[np.float64]

ColorSpec = str | int | tuple[int, int, int]
"""A colour: a Theme field name (``"accent"``, ``"up"``, ...), a palette index, or ``(r, g, b)``."""

_THEME_FIELDS = ("background", "foreground", "muted", "grid", "accent", "up", "down")


def resolve_color(theme: Theme, spec: ColorSpec) -> Color:
    """The RGB colour ``spec`` names in ``theme``.

    Raises:
        ValueError: an unknown name or a malformed tuple.
    """
    if isinstance(spec, str):
        if spec not in _THEME_FIELDS:
            raise ValueError(
                f"Unknown colour {spec!r}; use one of {', '.join(_THEME_FIELDS)}, a palette "
                "index or an (r, g, b) tuple."
            )
        color: Color = getattr(theme, spec)
        return color
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return palette_color(theme, int(spec))
    if (
        isinstance(spec, tuple)
        and len(spec) == 3
        and all(isinstance(c, int) and 0 <= c <= 255 for c in spec)
    ):
        return spec
    raise ValueError(f"A colour must be a theme name, a palette index or (r, g, b), got {spec!r}.")


_SHADES = 3
"""Shades of each palette colour given out before colours repeat (see ``palette_color``)."""


def palette_color(theme: Theme, index: int) -> Color:
    """Colour ``index`` of the theme's palette: the palette in order, then the palette again
    mixed towards the foreground, then towards the background; only after
    ``distinct_colors(theme)`` indices do colours repeat."""
    palette = theme.palette
    base = palette[index % len(palette)]
    shade = index // len(palette) % _SHADES
    if shade == 1:
        return mix(base, theme.foreground, 0.45)
    if shade == 2:
        return mix(base, theme.background, 0.5)
    return base


def distinct_colors(theme: Theme) -> int:
    """How many palette indices get colours of their own (``palette_color``)."""
    return _SHADES * len(theme.palette)


def check_color(name: str, spec: Any) -> ColorSpec:
    """``spec`` checked when a chart is built (``resolve_color`` draws it with a theme later).

    Raises:
        ValueError: ``spec`` names no colour; the message starts with ``name``.
    """
    try:
        resolve_color(Theme.light(), spec)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    checked: ColorSpec = spec
    return checked


def check_colors(name: str, specs: Any) -> list[ColorSpec] | None:
    """A list of colours, one per part (``check_color`` each), or None.

    Raises:
        TypeError: ``specs`` is not a sequence (a single name is not a list of them).
        ValueError: an entry names no colour.
    """
    if specs is None:
        return None
    if isinstance(specs, str) or not isinstance(specs, Sequence):
        raise TypeError(
            f"{name} must be a list of colours, one per part, got {type(specs).__name__} {specs!r}."
        )
    return [check_color(f"{name}[{i}]", spec) for i, spec in enumerate(specs)]


def mix(a: Sequence[int], b: Sequence[int], t: float) -> Color:
    """The colour ``t`` of the way from ``a`` to ``b``."""
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def finite_runs(values: Any) -> list[slice]:
    """The runs of consecutive finite ``values``: a line through them breaks at NaN (a gap)."""
    finite = np.isfinite(np.asarray(values, dtype=np.float64))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], finite.view(np.int8), [0]])))
    return [slice(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def fill_between(
    canvas: Canvas,
    xs: Any,
    top: Any,
    bottom: Any,
    color: Sequence[int],
    *,
    alpha: float = 1.0,
    clip: tuple[float, float, float, float] | None = None,
) -> None:
    """Fill the region between two curves sampled at pixel x positions ``xs`` (increasing).

    ``top`` and ``bottom`` are pixel y values (either may be the larger); between samples they
    are interpolated linearly, column by column, with partial coverage at the span ends. Much
    faster than a polygon with hundreds of vertices.
    """
    x = np.asarray(xs, dtype=np.float64)
    if x.size < 2:
        return
    y_a, y_b = np.asarray(top, dtype=np.float64), np.asarray(bottom, dtype=np.float64)
    left, top_edge, right, bottom_edge = clip or (0.0, 0.0, canvas.width, canvas.height)
    c0 = max(math.floor(max(x[0], left)), 0)
    c1 = min(math.ceil(min(x[-1], right)), canvas.width)
    if c0 >= c1:
        return
    centres = np.arange(c0, c1) + 0.5
    lo = np.interp(centres, x, np.minimum(y_a, y_b))
    hi = np.interp(centres, x, np.maximum(y_a, y_b))
    lo, hi = np.clip(lo, top_edge, bottom_edge), np.clip(hi, top_edge, bottom_edge)
    _fill_columns(canvas, c0, lo, hi, _column_cover(c0, c1, x[0], x[-1]), color, alpha)


def _column_cover(c0: int, c1: int, start: float, stop: float) -> FloatArray:
    """How much of each pixel column in ``[c0, c1)`` lies within ``[start, stop]``."""
    cols = np.arange(c0, c1, dtype=np.float64)
    cover: FloatArray = np.clip(np.minimum(cols + 1.0, stop) - np.maximum(cols, start), 0.0, 1.0)
    return cover


def _fill_columns(
    canvas: Canvas,
    c0: int,
    lo: FloatArray,
    hi: FloatArray,
    cover_x: FloatArray,
    color: Sequence[int],
    alpha: float,
) -> None:
    """Paint, in each column from ``c0`` on, the span ``[lo, hi]`` (fractional at its ends)."""
    r0 = max(math.floor(float(lo.min())), 0)
    r1 = min(math.ceil(float(hi.max())), canvas.height)
    if r0 >= r1:
        return
    rows = np.arange(r0, r1, dtype=np.float64)[:, None]
    cover = np.clip(np.minimum(rows + 1.0, hi[None, :]) - np.maximum(rows, lo[None, :]), 0.0, 1.0)
    canvas.blend(c0, r0, cover * cover_x[None, :], color, alpha=alpha)


def series_line(
    canvas: Canvas,
    xs: Any,
    ys: Any,
    color: Sequence[int],
    *,
    width: float = 1.0,
    alpha: float = 1.0,
) -> None:
    """Draw a polyline whose x increases, column by column (fast for long time series).

    In each pixel column the line covers the range of y it passes through, widened by half the
    width above and below; short lines go through ``Canvas.polyline`` (round joins, exact
    anti-aliasing) instead.
    """
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    if x.size < 40 or np.any(np.diff(x) < 0):
        canvas.polyline(np.column_stack([x, y]), color, width=width, alpha=alpha)
        return
    half = width / 2.0
    c0 = max(math.floor(x[0] - half), 0)
    c1 = min(math.ceil(x[-1] + half), canvas.width)
    if c0 >= c1:
        return
    edges = np.arange(c0, c1 + 1, dtype=np.float64)
    at_edges = np.interp(edges, x, y)
    lo = np.minimum(at_edges[:-1], at_edges[1:])
    hi = np.maximum(at_edges[:-1], at_edges[1:])
    # Vertices inside a column may reach beyond its edges (peaks and troughs).
    column = np.clip(np.floor(x).astype(np.int64) - c0, 0, c1 - c0 - 1)
    np.minimum.at(lo, column, y)
    np.maximum.at(hi, column, y)
    lo, hi = lo - half, hi + half
    r0 = max(math.floor(float(lo.min())), 0)
    r1 = min(math.ceil(float(hi.max())), canvas.height)
    if r0 >= r1:
        return
    rows = np.arange(r0, r1, dtype=np.float64)[:, None]
    cover = np.clip(np.minimum(rows + 1.0, hi[None, :]) - np.maximum(rows, lo[None, :]), 0.0, 1.0)
    # Steep stretches are one column wide: lend each column's ink to its neighbours in
    # proportion to how far the line's half width reaches beyond the pixel's own half.
    spill = min(max(half - 0.5, 0.0), 1.0)
    if spill > 0:
        near = np.zeros_like(cover)
        near[:, 1:] = cover[:, :-1]
        np.maximum(near[:, :-1], cover[:, 1:], out=near[:, :-1])
        np.maximum(cover, near * spill, out=cover)
    cover_x = _column_cover(c0, c1, x[0] - half, x[-1] + half)
    canvas.blend(c0, r0, cover * cover_x[None, :], color, alpha=alpha)


def hline(
    canvas: Canvas, x0: float, x1: float, y: float, color: Sequence[int], *,
    width: float = 1.0, alpha: float = 1.0,
) -> None:  # fmt: skip
    """A horizontal line ``width`` pixels thick centred on ``y`` (a rectangle: fast)."""
    canvas.rect(x0, y - width / 2, x1, y + width / 2, color, alpha=alpha)


def vline(
    canvas: Canvas, x: float, y0: float, y1: float, color: Sequence[int], *,
    width: float = 1.0, alpha: float = 1.0,
) -> None:  # fmt: skip
    """A vertical line ``width`` pixels thick centred on ``x`` (a rectangle: fast)."""
    canvas.rect(x - width / 2, y0, x + width / 2, y1, color, alpha=alpha)


def dashed(
    canvas: Canvas,
    points: Any,
    color: Sequence[int],
    *,
    width: float = 1.0,
    dash: float = 6.0,
    gap: float = 4.0,
    alpha: float = 1.0,
) -> None:
    """Draw a polyline as dashes of ``dash`` pixels separated by ``gap`` pixels."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) < 2:
        return
    seg = np.hypot(*(pts[1:] - pts[:-1]).T)
    along = np.concatenate([[0.0], np.cumsum(seg)])
    period = dash + gap
    start = 0.0
    while start < along[-1]:
        end = min(start + dash, along[-1])
        ts = np.concatenate([[start], along[(along > start) & (along < end)], [end]])
        xs = np.interp(ts, along, pts[:, 0])
        ys = np.interp(ts, along, pts[:, 1])
        canvas.polyline(np.column_stack([xs, ys]), color, width=width, alpha=alpha)
        start += period


def triangle(
    canvas: Canvas,
    x: float,
    y: float,
    size: float,
    color: Sequence[int],
    *,
    up: bool,
    outline: Sequence[int] | None = None,
) -> None:
    """A marker triangle centred on ``(x, y)``: pointing up (a buy) or down (a sell)."""
    h = size * 0.9
    sign = -1.0 if up else 1.0
    tip = (x, y + sign * h * 0.6)
    base = y - sign * h * 0.4
    pts = [tip, (x - size * 0.55, base), (x + size * 0.55, base)]
    if outline is not None:
        grow = 1.4
        big = [(x + (px - x) * grow, y + (py - y) * grow) for px, py in pts]
        canvas.polygon(big, outline)
    canvas.polygon(pts, color)


def fit_text(value: str, max_width: float, size: int) -> str:
    """``value`` shortened with ``…`` so that it is at most ``max_width`` pixels wide."""
    value = plain(value)
    if Canvas.text_size(value, size)[0] <= max_width:
        return value
    for cut in range(len(value) - 1, 0, -1):
        candidate = value[:cut].rstrip() + "…"
        if Canvas.text_size(candidate, size)[0] <= max_width:
            return candidate
    return ""


def text(
    canvas: Canvas,
    x: float,
    y: float,
    value: str,
    color: Sequence[int],
    *,
    size: int = 1,
    anchor: str = "lt",
    max_width: float | None = None,
    alpha: float = 1.0,
) -> tuple[int, int, int, int]:
    """``Canvas.text`` with unsupported characters replaced and an optional width limit."""
    value = plain(value) if max_width is None else fit_text(value, max_width, size)
    if not value:
        return round(x), round(y), round(x), round(y)
    return canvas.text(x, y, value, color, size=size, anchor=anchor, alpha=alpha)
