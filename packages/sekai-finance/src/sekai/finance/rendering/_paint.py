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
    "dashed",
    "fill_between",
    "fit_text",
    "mix",
    "resolve_color",
    "text",
    "triangle",
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
        return theme.palette[int(spec) % len(theme.palette)]
    if (
        isinstance(spec, tuple)
        and len(spec) == 3
        and all(isinstance(c, int) and 0 <= c <= 255 for c in spec)
    ):
        return spec
    raise ValueError(f"A colour must be a theme name, a palette index or (r, g, b), got {spec!r}.")


def mix(a: Sequence[int], b: Sequence[int], t: float) -> Color:
    """The colour ``t`` of the way from ``a`` to ``b``."""
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def _blend(canvas: Canvas, x0: int, y0: int, weight: FloatArray, color: Sequence[int]) -> None:
    h, w = weight.shape
    region = canvas.pixels[y0 : y0 + h, x0 : x0 + w]
    ink = np.asarray(color, dtype=np.float64)
    mixed = region + (ink - region) * weight[..., None]
    region[...] = np.clip(mixed + 0.5, 0.0, 255.0).astype(np.uint8)


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
    # Horizontal coverage of the first and last columns (the span may start mid-pixel).
    cover_x = np.clip(np.minimum(np.arange(c0, c1) + 1.0, x[-1]) - np.maximum(np.arange(c0, c1), x[0]), 0, 1)
    r0 = max(math.floor(float(lo.min())), 0)
    r1 = min(math.ceil(float(hi.max())), canvas.height)
    if r0 >= r1:
        return
    rows = np.arange(r0, r1, dtype=np.float64)[:, None]
    cover = np.clip(np.minimum(rows + 1.0, hi[None, :]) - np.maximum(rows, lo[None, :]), 0.0, 1.0)
    _blend(canvas, c0, r0, cover * cover_x[None, :] * float(alpha), color)


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
