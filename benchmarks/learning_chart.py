"""Learning-curve pictures for ``learning.py``: score against wall-clock seconds, the baselines
as horizontal lines, drawn on ``sekai.rendering.Canvas`` and written as PNG with the standard
library, so the script needs neither matplotlib nor Pillow wherever it runs."""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from sekai.rendering import Canvas

__all__ = ["curve_chart", "write_png"]

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 40
INK, GRID = (40, 40, 40), (225, 225, 225)
# One colour per agent, then per baseline.
AGENT_COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44)]
BASELINE_COLOURS = [(255, 127, 14), (148, 103, 189), (140, 86, 75)]


def write_png(path: Path, pixels: np.ndarray) -> Path:
    """Write an ``(height, width, 3)`` uint8 image as an 8-bit RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    height, width, _ = pixels.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    data += chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + chunk(b"IEND", b"")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values spanning ``[low, high]``."""
    raw = (high - low) / max(count - 1, 1)
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if m * step >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _label(value: float) -> str:
    return f"{value:.4g}"


def curve_chart(
    title: str,
    curves: Mapping[str, Sequence[tuple[float, float]]],
    baselines: Mapping[str, float],
) -> np.ndarray:
    """A chart of ``curves`` (agent -> (seconds, score) points) and ``baselines`` (name ->
    score) as an ``(height, width, 3)`` uint8 image."""
    canvas = Canvas(WIDTH, HEIGHT)
    points = {
        name: [(x, y) for x, y in rows if math.isfinite(x) and math.isfinite(y)]
        for name, rows in curves.items()
    }
    xs = [x for rows in points.values() for x, _ in rows] or [0.0, 1.0]
    ys = [y for rows in points.values() for _, y in rows] + [
        v for v in baselines.values() if math.isfinite(v)
    ]
    ys = ys or [0.0, 1.0]
    x0, x1 = 0.0, max(max(xs), 1e-9)
    y0, y1 = min(ys), max(ys)
    pad = (y1 - y0) * 0.05 or abs(y0) * 0.05 or 1.0
    y0, y1 = y0 - pad, y1 + pad
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float, y: float) -> tuple[float, float]:
        return (LEFT + (x - x0) / (x1 - x0) * plot_w, TOP + (y1 - y) / (y1 - y0) * plot_h)

    for tick in _ticks(y0, y1):
        _, y = px(x0, tick)
        canvas.line((LEFT, y), (WIDTH - RIGHT, y), GRID)
        canvas.text(LEFT - 6, y, _label(tick), INK, anchor="rm")
    for tick in _ticks(x0, x1):
        x, _ = px(tick, y0)
        canvas.line((x, TOP), (x, HEIGHT - BOTTOM), GRID)
        canvas.text(x, HEIGHT - BOTTOM + 6, _label(tick), INK, anchor="mt")
    canvas.line((LEFT, HEIGHT - BOTTOM), (WIDTH - RIGHT, HEIGHT - BOTTOM), INK)
    canvas.line((LEFT, TOP), (LEFT, HEIGHT - BOTTOM), INK)
    canvas.text(LEFT, 10, title, INK, anchor="lt")
    canvas.text(LEFT + plot_w / 2, HEIGHT - 12, "wall-clock seconds (compile included)", INK,
                anchor="mm")  # fmt: skip
    legend: list[tuple[str, tuple[int, int, int]]] = []
    for colour, (name, value) in zip(BASELINE_COLOURS, baselines.items()):
        if not math.isfinite(value):
            continue
        _, y = px(x0, value)
        canvas.line((LEFT, y), (WIDTH - RIGHT, y), colour, width=1.5)
        legend.append((f"{name} {_label(value)}", colour))
    for colour, (name, rows) in zip(AGENT_COLOURS, points.items()):
        if len(rows) >= 2:
            canvas.polyline([px(x, y) for x, y in rows], colour, width=2.0)
        for x, y in rows[-1:]:
            canvas.circle(px(x, y), 3.0, colour)
        legend.append((name, colour))
    # The legend in one row above the plot, where no line can run under it.
    x = float(LEFT)
    for label, colour in legend:
        canvas.line((x, 26), (x + 14, 26), colour, width=2.0)
        width, _ = Canvas.text_size(label)
        canvas.text(x + 18, 26, label, INK, anchor="lm")
        x += 18 + width + 16
    return canvas.to_array()
